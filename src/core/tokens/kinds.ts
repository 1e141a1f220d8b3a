/** The token kinds (CONTRACT.md). Kept apart from the writer so the main thread reads them without the ORM. */
export const TOKEN_KINDS = ['admin', 'personal', 'schedules'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

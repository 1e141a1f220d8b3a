#!/usr/bin/env node
// agent.mjs - stands for the log agent that reads a gateway's standard output (bench/observe): reads the FIFO
// `<fifo>` to its end, counts the lines, and every 100 ms replaces `<countFile>` with
//   {"lines": n, "bytes": n, "sample": "<the last whole line>"}
// It runs on the load core, away from the gateway, as an agent would run beside it.
import fs from 'node:fs';

const [fifo, countFile] = process.argv.slice(2);
if (!fifo || !countFile) { process.stderr.write('usage: agent.mjs <fifo> <countFile>\n'); process.exit(2); }

let lines = 0, bytes = 0, sample = '', tail = '';
const save = () => {
  fs.writeFileSync(`${countFile}.tmp`, JSON.stringify({ lines, bytes, sample }));
  fs.renameSync(`${countFile}.tmp`, countFile);
};
save();
const timer = setInterval(save, 100);
const stream = fs.createReadStream(fifo, { highWaterMark: 1 << 20 });
stream.on('data', (buf) => {
  bytes += buf.length;
  let at = -1, last = -1;
  while ((at = buf.indexOf(10, at + 1)) !== -1) { lines++; last = at; }
  // Keep the last whole line as the sample: the piece after the previous newline in this chunk.
  if (last !== -1) {
    const prev = buf.lastIndexOf(10, last - 1);
    sample = (prev === -1 ? tail : '') + buf.subarray(prev + 1, last).toString('utf8');
    tail = buf.subarray(last + 1).toString('utf8').slice(0, 4096);
  } else tail = (tail + buf.toString('utf8')).slice(0, 4096);
});
stream.on('end', () => { clearInterval(timer); save(); });
stream.on('error', (e) => { process.stderr.write(`agent: ${e.message}\n`); process.exit(1); });

#!/usr/bin/env node
// Times one ONNX model in ONNX Runtime (onnxruntime-node, CPU) for bench/compare_ort.py.
//
//   node bench/ort/run_ort.js --model m.onnx --inputs inputs.json [--threads 1] [--runs 20]
//        [--warmup 3] [--spinning 0] [--outputs DIR] [--profile PREFIX]
//
// inputs.json: [{"name": "input", "dims": [1, 3, 224, 224], "file": "input_0.f32"}, ...],
// each file raw little-endian float32, relative to inputs.json's folder. The session runs
// with `threads` intra-op threads, one inter-op thread, sequential execution and every
// graph optimisation; its intra-op threads spin while they wait only with --spinning 1
// (ONNX Runtime's default), as minfer's OpenMP threads wait passively in the comparison
// (OMP_WAIT_POLICY=PASSIVE): spinning threads on a shared machine take the cores the
// working ones need. Prints one JSON object: the versions, the settings, run_ms (each
// timed run's wall time around session.run, after `warmup` untimed runs) and, with
// --outputs, the first run's outputs written to DIR/output_K.f32 with their names and dims;
// with --profile, ONNX Runtime's own profile of every run (each node's kernel time, as
// bench/ort_op_times.py reads it) written to PREFIX_<date and time>.json.
// On bad input: one line on stderr, exit status 1, nothing on stdout.
'use strict';
const fs = require('fs');
const path = require('path');

function parseArgs(argv) {
  const args = {threads: 1, runs: 20, warmup: 3, spinning: 0};
  const numeric = new Set(['threads', 'runs', 'warmup', 'spinning']);
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!argv[i].startsWith('--') || !['model', 'inputs', 'outputs', 'profile', ...numeric].includes(key))
      throw new Error(`unknown argument '${argv[i]}'`);
    if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
    const value = argv[i + 1];
    if (numeric.has(key)) {
      const n = Number(value);
      const least = key === 'warmup' || key === 'spinning' ? 0 : 1;
      if (!Number.isInteger(n) || n < least || (key === 'spinning' && n > 1))
        throw new Error(`${argv[i]} '${value}': expected ${key === 'spinning' ? '0 or 1' : `a whole number >= ${least}`}`);
      args[key] = n;
    } else {
      args[key] = value;
    }
  }
  if (!args.model) throw new Error('--model is required');
  if (!args.inputs) throw new Error('--inputs is required');
  return args;
}

function readFeeds(ort, manifestPath) {
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  const feeds = {};
  for (const input of manifest) {
    const file = path.resolve(path.dirname(manifestPath), input.file);
    const bytes = fs.readFileSync(file);
    const count = input.dims.reduce((a, b) => a * b, 1);
    if (bytes.length !== 4 * count)
      throw new Error(`${file}: ${bytes.length} bytes, expected ${4 * count} for '${input.name}' [${input.dims}]`);
    // A copy, aligned for Float32Array (a Buffer's offset into its pool may not be).
    const data = new Float32Array(count);
    new Uint8Array(data.buffer).set(bytes);
    feeds[input.name] = new ort.Tensor('float32', data, input.dims);
  }
  return feeds;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const ort = require('onnxruntime-node');
  const feeds = readFeeds(ort, args.inputs);
  const session = await ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: args.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    extra: {session: {intra_op: {allow_spinning: String(args.spinning)}}},
    ...(args.profile ? {enableProfiling: true, profileFilePrefix: args.profile} : {}),
  });
  let first = null;
  for (let i = 0; i < args.warmup; ++i) first = first || await session.run(feeds);
  const runMs = [];
  for (let i = 0; i < args.runs; ++i) {
    const t0 = process.hrtime.bigint();
    const out = await session.run(feeds);
    runMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
    first = first || out;
  }
  const outputs = [];
  if (args.outputs) {
    fs.mkdirSync(args.outputs, {recursive: true});
    session.outputNames.forEach((name, k) => {
      const t = first[name];
      if (t.type !== 'float32') throw new Error(`output '${name}' has type ${t.type}, not float32`);
      const file = path.join(args.outputs, `output_${k}.f32`);
      fs.writeFileSync(file, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
      outputs.push({name, dims: t.dims, file});
    });
  }
  if (args.profile) session.endProfiling();
  const report = {
    onnxruntime: ort.env.versions,
    threads: args.threads,
    warmup: args.warmup,
    spinning: args.spinning,
    run_ms: runMs,
    outputs,
  };
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((e) => {
  process.stderr.write(`run_ort.js: ${String(e.message || e).split('\n')[0]}\n`);
  process.exit(1);
});

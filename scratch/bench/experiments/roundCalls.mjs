/**
 * A probe for the journal's I/O thread at 128 sessions, bare system calls only: what one round
 * costs, its writes to 128 session files (each followed by a check of the file, one way or another)
 * and its commit (one `writev` of their records to a journal written ahead with zeros, one
 * fdatasync). The ways of checking, in rounds interleaved: `lstat` of the path (what the thread
 * does), `fstat` of the descriptor (proves less: not that the path still names the file), `readlink`
 * of the descriptor and a read of its last byte (`Blocking.stillAt`, no stat), none.
 * Run: `npx node scratch/bench/experiments/roundCalls.mjs [directory-root] [rounds]` (default: the
 * current directory).
 *
 * Measured on this 2-vCPU VM, ext4 (2026-12-02, seven runs): per batch, the `lstat` 4.0-6.8 µs, the
 * `fstat` 2.7-3.1, the `readlink` and read 7.9-12.9, against the write's own 3.8-6.5; the commit the
 * same whichever way (a stat before a lone append's write makes the journal's next fdatasync
 * dearer, `statBeforeSync.ts`; with 128 session files written per round, it doesn't).
 */
import { fdatasyncSync, fstatSync, fsyncSync, lstatSync, mkdirSync, mkdtempSync, openSync, readlinkSync, readSync, rmSync, writeSync, writevSync } from "node:fs"
import { join } from "node:path"

const root = mkdtempSync(join(process.argv[2] ?? process.cwd(), ".round-calls-"))
const rounds = Number(process.argv[3] ?? 150)
const sessions = 128
const line = Buffer.from(`${"x".repeat(1100)}\n`)
const record = Buffer.from(`${"y".repeat(1160)}\n`)
const records = Array.from({ length: sessions }, () => record)
const statOptions = { bigint: true, throwIfNoEntry: false }
const lastByte = Buffer.alloc(2)
const journalBytes = 64 * 1024 * 1024

const checks = {
  lstat: (file) => lstatSync(file.path, statOptions),
  fstat: (file) => fstatSync(file.fd, { bigint: true }),
  "readlink+read": (file) => {
    readlinkSync(`/proc/self/fd/${file.fd}`)
    readSync(file.fd, lastByte, 0, 2, file.end - 1)
  },
  none: () => {}
}
const names = Object.keys(checks)
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]

const setUp = (name) => {
  const directory = join(root, name.replace(/\W/g, "-"))
  mkdirSync(directory)
  const journal = openSync(join(directory, "journal.wal"), "w+")
  writeSync(journal, new Uint8Array(journalBytes))
  fsyncSync(journal)
  const files = Array.from({ length: sessions }, (_, i) => {
    const path = join(directory, `s${i}.jsonl`)
    return { path, fd: openSync(path, "a+"), end: 0 }
  })
  return { journal, files, at: 0, writes: [], commits: [] }
}
let state = {}

try {
  // Set up inside `try`, so that the directory goes whatever fails.
  state = Object.fromEntries(names.map((name) => [name, setUp(name)]))
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length]
      const s = state[name]
      const t0 = process.hrtime.bigint()
      for (const file of s.files) {
        writeSync(file.fd, line)
        file.end += line.length
        checks[name](file)
      }
      const t1 = process.hrtime.bigint()
      writevSync(s.journal, records, s.at)
      fdatasyncSync(s.journal)
      const t2 = process.hrtime.bigint()
      s.at = s.at + record.length * sessions > journalBytes - record.length * sessions ? 0 : s.at + record.length * sessions
      // The first tenth warms up, uncounted.
      if (round >= rounds / 10) {
        s.writes.push(Number(t1 - t0) / 1000)
        s.commits.push(Number(t2 - t1) / 1000)
      }
    }
  }
  for (const name of names) {
    const s = state[name]
    console.log(`${name.padEnd(14)} writes and checks ${median(s.writes).toFixed(0).padStart(5)} µs a round (${(median(s.writes) / sessions).toFixed(1)} per batch), commit ${median(s.commits).toFixed(0)} µs`)
  }
} finally {
  rmSync(root, { recursive: true, force: true })
}

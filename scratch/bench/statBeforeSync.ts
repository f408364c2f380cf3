/**
 * A probe, not a benchmark with a goal: bare system calls only, to show what a stat of a session
 * file costs the journal's `fdatasync` that follows its next write. Each way runs in rounds of 25,
 * interleaved, in a fresh directory under `[directory-root]` (default: the current directory, a
 * real disk; a tmpfs shows nothing). Run with `npx node scratch/bench/statBeforeSync.ts [directory-root] [rounds]`.
 *
 * Why it matters: a stat asks for a file's times, and on Linux since 6.13 (multigrain timestamps)
 * a file whose times were asked for stamps its next write with a fine-grained time, dirtying its
 * inode at every append instead of once per clock tick. Measured on Linux 6.18, ext4: the journal's
 * fdatasync costs ~50-70 µs more after it. `BlockingIo.Blocking.stillAt` checks without a stat.
 */
import {
  fdatasyncSync,
  fsyncSync,
  fstatSync,
  lstatSync,
  mkdtempSync,
  openSync,
  readlinkSync,
  readSync,
  rmSync,
  writeFileSync,
  writeSync
} from "node:fs"
import { join } from "node:path"
import { median } from "./harness.ts"

const root = mkdtempSync(join(process.argv[2] ?? process.cwd(), ".stat-probe-"))
const rounds = Number(process.argv[3] ?? 160)
const sessionPath = join(root, "s.jsonl")
const lockPath = join(root, "s.lock")
writeFileSync(lockPath, "owner")
const session = openSync(sessionPath, "a+")
const other = openSync(join(root, "o.jsonl"), "a+")
const otherPath = join(root, "o.jsonl")
const journal = openSync(join(root, "j.wal"), "w")
// Written ahead with zeros and synced, as the journal is: a record then overwrites them in place.
const ahead = 64 << 20
writeSync(journal, new Uint8Array(ahead), 0, ahead, 0)
fdatasyncSync(journal)

const line = Buffer.from(`${"x".repeat(560)}\n`)
const lastTwo = new Uint8Array(2)
let journalAt = 0
let sessionEnd = 0
let otherEnd = 0
const journalCommit = () => {
  writeSync(session, line)
  sessionEnd += line.length
  writeSync(journal, line, 0, line.length, journalAt)
  journalAt = (journalAt + 640) % (ahead - 1024)
  fdatasyncSync(journal)
}
const fileCommit = () => {
  writeSync(other, line)
  otherEnd += line.length
  fsyncSync(other)
}
/** The calls `BlockingIo.node.stillAt` makes. */
const stillAt = (fd: number, path: string, end: number) => {
  if (readlinkSync(`/proc/self/fd/${fd}`) !== path || readSync(fd, lastTwo, 0, 2, end - 1) !== 1) {
    throw new Error(`${path} is not where it was, or doesn't end at ${end}`)
  }
}

const ways: Record<string, () => void> = {
  "journal, no check": journalCommit,
  "journal, lstat of the lock (never written)": () => {
    lstatSync(lockPath)
    journalCommit()
  },
  "journal, lstat of the session file": () => {
    journalCommit()
    lstatSync(sessionPath)
  },
  "journal, fstat of the session file": () => {
    journalCommit()
    fstatSync(session)
  },
  "journal, stillAt (readlink /proc/self/fd + last byte)": () => {
    journalCommit()
    stillAt(session, sessionPath, sessionEnd)
  },
  "file: write + fsync": fileCommit,
  "file: write + fsync, lstat": () => {
    fileCommit()
    lstatSync(otherPath)
  },
  "file: write + fsync, stillAt": () => {
    fileCommit()
    stillAt(other, otherPath, otherEnd)
  }
}

const wall: Record<string, Array<number>> = {}
const cpu: Record<string, Array<number>> = {}
try {
  const names = Object.keys(ways)
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length]!
      for (let n = 0; n < 25; n++) {
        const c0 = process.cpuUsage()
        const t0 = process.hrtime.bigint()
        ways[name]!()
        const t = Number(process.hrtime.bigint() - t0) / 1000
        const c = process.cpuUsage(c0)
        // The first fifth warms up.
        if (round >= rounds / 5) {
          ;(wall[name] ??= []).push(t)
          ;(cpu[name] ??= []).push(c.user + c.system)
        }
      }
    }
  }
  for (const name of names) {
    console.log(`${name.padEnd(56)} p50 ${median(wall[name]!).toFixed(0).padStart(4)} µs, CPU ${median(cpu[name]!).toFixed(0).padStart(3)} µs`)
  }
} finally {
  rmSync(root, { recursive: true, force: true })
}

/**
 * Whether a PostgreSQL server answers at `url`: a TCP connection within 2 s. The SQL tests and the
 * `sqlAppend` benchmark use it to decide whether to run (or, in CI, to fail).
 */
import { createConnection } from "node:net"

export const defaultUrl = "postgres://postgres@127.0.0.1:5432/test"

export const reachable = (url: string) =>
  new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(url)
    const socket = createConnection({ host: hostname, port: Number(port || 5432) })
    socket.setTimeout(2000)
    socket.once("connect", () => (socket.destroy(), resolve(true)))
    socket.once("error", () => resolve(false))
    socket.once("timeout", () => (socket.destroy(), resolve(false)))
  })

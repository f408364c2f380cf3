/**
 * How the CLI reports: errors as one line each on stderr, a usage error as that line and a hint to
 * `--help` instead of the whole help first. Errors and logs never go to stdout, which under `serve` is
 * the JSON-RPC channel.
 */
import * as CliOutput from "effect/cli/CliOutput"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"

/** A message on one line: control characters (a newline, an escape sequence) become spaces. */
export const oneLine = (message: string) => message.replace(/[\u0000-\u001f\u007f][\u0000-\u0020\u007f]*/g, " ").trim()

const defaults = CliOutput.defaultFormatter()

export const formatter: CliOutput.Formatter = {
  ...defaults,
  formatError: (error) => `todo-write: ${oneLine(error.message)}`,
  formatErrors: (errors) => errors.map((error) => `todo-write: ${oneLine(error.message)}`).join("\n")
}

export const presenter: CliOutput.Presenter = {
  present: (event) =>
    Effect.gen(function*() {
      switch (event._tag) {
        case "InvalidInvocation":
          yield* Console.error(formatter.formatErrors(event.errors))
          return yield* Console.error(`Run \`${event.commandPath.join(" ")} --help\` for usage.`)
        default:
          return yield* CliOutput.defaultPresenter.present(event)
      }
    })
}

/** The CLI's formatter and presenter, for `Command.run`, and its logs on stderr. */
export const layer = Layer.mergeAll(
  CliOutput.layer(formatter),
  CliOutput.layerPresenter(presenter),
  Layer.succeed(Logger.LogToStderr, true)
)

/** A count with its noun: "1 event", "2 events". */
export const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`

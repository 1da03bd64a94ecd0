import Lifeline
import LifelineProtocol
import LifelineSupport

/// `lifeline completion bash|zsh`: a shell completion script.
enum CompletionCommand: CLICommand {
    static let name = "completion"
    static let summary = "print a bash or zsh completion script"
    static let usage = """
        usage: lifeline completion bash|zsh

        Prints a completion script: commands, each command's options, and event names after
        publish, dispatch and tail. Install with, e.g.:
          lifeline completion bash > /etc/bash_completion.d/lifeline
          lifeline completion zsh > "${fpath[1]}/_lifeline"
        """
    static let options = [CommandLineOption]()

    /// Each command with the long spellings of the options it declares.
    static var optionsByCommand: [(command: String, options: String)] {
        CLI.commands.map { command in
            let names = (command.options + [.helpFlag]).flatMap(\.names).filter { $0.hasPrefix("--") }
            return (command.name, names.joined(separator: " "))
        }
    }

    static func run(_ arguments: inout CommandLineArguments) throws -> Int32 {
        guard let shell = arguments.positional() else { throw UsageError("completion needs 'bash' or 'zsh'") }
        try arguments.finish()
        let commands = CLI.commands.map(\.name).joined(separator: " ")
        let events = EventCatalog.names.map(\.rawValue).joined(separator: " ")
        let bashOptions = optionsByCommand.map {
            "            \($0.command)) COMPREPLY=($(compgen -W \"\($0.options)\" -- \"$current\")) ;;"
        }
        let zshOptions = optionsByCommand.map { "            \($0.command)) compadd -- \($0.options) ;;" }
        switch shell {
        case "bash":
            Console.out(
                """
                # bash completion for lifeline (lifeline completion bash)
                _lifeline() {
                    local current=${COMP_WORDS[COMP_CWORD]} command=${COMP_WORDS[1]}
                    if [ "$COMP_CWORD" -eq 1 ]; then
                        COMPREPLY=($(compgen -W "\(commands)" -- "$current"))
                    elif [[ $current == -* ]]; then
                        case $command in
                \(bashOptions.joined(separator: "\n"))
                        esac
                    elif [ "$COMP_CWORD" -eq 2 ] && [[ " publish dispatch tail " == *" $command "* ]]; then
                        COMPREPLY=($(compgen -W "\(events)" -- "$current"))
                    else
                        COMPREPLY=($(compgen -f -- "$current"))
                    fi
                }
                complete -F _lifeline lifeline
                """)
        case "zsh":
            Console.out(
                """
                #compdef lifeline
                # zsh completion for lifeline (lifeline completion zsh)
                _lifeline() {
                    if (( CURRENT == 2 )); then
                        compadd -- \(commands)
                    elif [[ $words[CURRENT] == -* ]]; then
                        case $words[2] in
                \(zshOptions.joined(separator: "\n"))
                        esac
                    elif (( CURRENT == 3 )) && [[ " publish dispatch tail " == *" $words[2] "* ]]; then
                        compadd -- \(events)
                    else
                        _files
                    fi
                }
                compdef _lifeline lifeline
                """)
        default:
            throw UsageError("completion: unknown shell '\(shell.escapedForLog)'; shells: bash, zsh")
        }
        return 0
    }
}

import Glibc
import LifelineCLI

exit(CLI.main(Array(CommandLine.arguments.dropFirst())))

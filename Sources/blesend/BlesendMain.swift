import BlesendCLI

@main
struct BlesendMain {
    static func main() async { await BlesendCommand.runAsync() }
}

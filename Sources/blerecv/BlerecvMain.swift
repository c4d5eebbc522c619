import BlesendCLI

@main
struct BlerecvMain {
    static func main() async { await BlerecvCommand.runAsync() }
}

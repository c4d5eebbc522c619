/// Human-readable sizes, rates and durations for the terminal.
enum Formatting {
    static func bytes(_ count: UInt64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(count) B" }
        return "\(oneDecimal(value)) \(units[unit])"
    }

    /// Bytes per second as kB/s (1000), as radios are usually quoted.
    static func rate(_ bytesPerSecond: Double) -> String {
        guard bytesPerSecond.isFinite, bytesPerSecond > 0 else { return "- kB/s" }
        if bytesPerSecond >= 1_000_000 { return "\(oneDecimal(bytesPerSecond / 1_000_000)) MB/s" }
        return "\(oneDecimal(bytesPerSecond / 1000)) kB/s"
    }

    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "-:--" }
        let total = Int(seconds.rounded())
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        let ss = s < 10 ? "0\(s)" : "\(s)"
        if h > 0 { return "\(h):\(m < 10 ? "0\(m)" : "\(m)"):\(ss)" }
        return "\(m):\(ss)"
    }

    static func seconds(_ seconds: Double) -> String { oneDecimal(seconds) + " s" }

    static func bar(fraction: Double, width: Int = 14) -> String {
        let filled = max(0, min(width, Int((fraction * Double(width)).rounded(.down))))
        return String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
    }

    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}

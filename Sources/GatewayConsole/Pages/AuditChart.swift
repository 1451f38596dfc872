import Foundation
import GatewayConsoleKit
import GatewayCore

/// Token requests per minute as an SVG bar chart drawn on the server:
/// issued tokens at the foot of each bar, denials stacked above them by
/// reason, with a legend of totals. Every text in it is escaped here, since
/// the page embeds the SVG as markup.
struct AuditChart {
    struct Minute {
        let start: String
        let issued: Int
        let denied: [(reason: String, count: Int)]
        var total: Int { issued + denied.reduce(0) { $0 + $1.count } }
    }

    let minutes: [Minute]

    static let width = 720.0
    static let height = 180.0
    static let issuedColor = "#2f855a"
    static let reasonColors = ["#c53030", "#dd6b20", "#b7791f", "#6b46c1", "#2b6cb0", "#97266d", "#4a5568"]

    /// From the API's `audit_events:per_minute` answer.
    init(_ json: JSONValue) {
        guard case .array(let rows)? = json["minutes"] else {
            minutes = []
            return
        }
        minutes = rows.map { row in
            var denied: [(String, Int)] = []
            if case .object(let reasons)? = row["denied_by_reason"] {
                for (reason, count) in reasons.sorted(by: { $0.key < $1.key }) {
                    if case .number(let value) = count { denied.append((reason, Int(value))) }
                }
            }
            var issued = 0
            if case .number(let value)? = row["issued"] { issued = Int(value) }
            return Minute(start: row["minute"]?.stringValue ?? "", issued: issued, denied: denied)
        }
    }

    /// The reasons that occur, most frequent first, each with its colour.
    var reasons: [(reason: String, total: Int, color: String)] {
        var totals: [String: Int] = [:]
        for minute in minutes { for (reason, count) in minute.denied { totals[reason, default: 0] += count } }
        return totals.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.enumerated().map { index, entry in
            (entry.key, entry.value, Self.reasonColors[min(index, Self.reasonColors.count - 1)])
        }
    }

    func svg() -> String {
        let peak = max(1, minutes.map(\.total).max() ?? 0)
        let issuedTotal = minutes.reduce(0) { $0 + $1.issued }
        let reasons = self.reasons
        let colors = Dictionary(uniqueKeysWithValues: reasons.map { ($0.reason, $0.color) })
        let plotTop = 16.0
        let plotHeight = Self.height - 40
        let barWidth = minutes.isEmpty ? 0 : Self.width / Double(minutes.count)
        let deniedTotal = reasons.reduce(0) { $0 + $1.total }
        let summary = "Token requests per minute: \(issuedTotal) issued, \(deniedTotal) denied"
        let fullHeight = Int(Self.height) + 24 * (reasons.count + 1)
        var svg = """
            <svg class="chart" width="\(Int(Self.width))" height="\(fullHeight)" viewBox="0 0 \(Int(Self.width)) \(fullHeight)" \
            role="img" aria-label="\(Self.escape(summary))" xmlns="http://www.w3.org/2000/svg">
            <title>\(Self.escape(summary))</title>
            <text x="0" y="11" class="axis">\(peak) per minute</text>
            <line x1="0" y1="\(plotTop + plotHeight)" x2="\(Self.width)" y2="\(plotTop + plotHeight)" stroke="#888"/>

            """
        for (index, minute) in minutes.enumerated() where minute.total > 0 {
            let x = Double(index) * barWidth
            var y = plotTop + plotHeight
            var segments: [(Int, String, String)] = [(minute.issued, Self.issuedColor, "issued")]
            segments += minute.denied.map { ($0.count, colors[$0.reason] ?? "#4a5568", "denied: \($0.reason)") }
            for (count, color, label) in segments where count > 0 {
                let height = Double(count) / Double(peak) * plotHeight
                y -= height
                svg += "<rect x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" width=\"\(Self.number(max(barWidth - 1, 0.5)))\" "
                svg += "height=\"\(Self.number(height))\" fill=\"\(color)\"><title>\(Self.escape(minute.start)) \(Self.escape(label)): \(count)</title></rect>\n"
            }
        }
        if let first = minutes.first, let last = minutes.last {
            let bottom = plotTop + plotHeight + 14
            svg += "<text x=\"0\" y=\"\(bottom)\" class=\"axis\">\(Self.escape(first.start))</text>\n"
            svg += "<text x=\"\(Self.width)\" y=\"\(bottom)\" class=\"axis\" text-anchor=\"end\">\(Self.escape(last.start))</text>\n"
        }
        var legendY = Self.height + 8
        let legend = [("issued", issuedTotal, Self.issuedColor)] + reasons.map { ("denied: \($0.reason)", $0.total, $0.color) }
        for (label, total, color) in legend {
            svg += "<rect x=\"0\" y=\"\(legendY)\" width=\"12\" height=\"12\" fill=\"\(color)\"/>"
            svg += "<text x=\"18\" y=\"\(legendY + 11)\" class=\"legend\">\(Self.escape(label)): \(total)</text>\n"
            legendY += 24
        }
        return svg + "</svg>"
    }

    static func number(_ value: Double) -> String { String(format: "%.2f", value) }

    static func escape(_ text: String) -> String { HTMLText.escaped(text) }
}

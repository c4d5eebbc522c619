import Admission
import Pipeline
import Testing

/// The admission policy's rules, one named script per row (`AdmissionScript`).
@Suite("Admission policy table")
struct AdmissionTableTests {
    static let rows = AdmissionScript.slotRows + AdmissionScript.deadlineRows + AdmissionScript.backoffRows + AdmissionScript.sessionRows
        + AdmissionScript.busyRows

    @Test(arguments: rows)
    func row(_ script: AdmissionScript) {
        script.run()
    }

    @Test func everyRuleHasARowAndRowNamesAreUnique() {
        for rule in 1...13 {
            #expect(Self.rows.contains { $0.rules.contains(rule) }, "rule \(rule) has no row")
        }
        #expect(Set(Self.rows.map(\.name)).count == Self.rows.count)
    }
}

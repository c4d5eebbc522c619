import L2CAP
import Testing
@testable import BlueZ

/// Address privacy is the kernel's privacy bit, whatever the address's type.
@Test func addressPrivacyIsTheKernelsPrivacySetting() {
    #expect(AddressPrivacy(ControllerSettings([.powered, .lowEnergy, .advertising, .privacy])) == .on)
    #expect(AddressPrivacy(ControllerSettings([.powered, .lowEnergy, .advertising])) == .off)
    // A static address without privacy is just as fixed.
    #expect(AddressPrivacy(ControllerSettings([.lowEnergy, .staticAddress])) == .off)
    #expect(AddressPrivacy.kernelSetting(adapter: "/org/bluez/hci0") == .unknown(.notAnAdapterName("/org/bluez/hci0")))
}

"""Independent implementation of blesend pairing (protocol.md §9), from the document alone."""
import ctypes, hashlib

_s = ctypes.CDLL("libsodium.so.23")
assert _s.sodium_init() >= 0

DSI = b"CPaceRistretto255"
PAIRING_CI = b"blesend/1 pair"
PAIRING_MODE = 0x50
S_IN_BYTES = 128
LABEL_S = b"blesend/1 pair S"
LABEL_R = b"blesend/1 pair R"
PINNED = b"\x01"
REFUSED = b"\x00"
BUSY = b"\x01"
NAME_ALPHABET = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


class PairingError(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def leb128(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def prepend_len(s):
    return leb128(len(s)) + s


def lv_cat(*parts):
    return b"".join(prepend_len(p) for p in parts)


def parse_code(typed):
    """Sender: exactly 8 ASCII digits, spaces and '-' ignored around and between them."""
    digits = "".join(c for c in typed if c not in " -")
    if len(digits) != 8 or not all(c in "0123456789" for c in digits):
        raise PairingError("malformedCode")
    return digits.encode("ascii")


def generator_string(prs, ci, sid):
    len_zpad = max(0, S_IN_BYTES - 1 - len(prepend_len(prs)) - len(prepend_len(DSI)))
    return lv_cat(DSI, prs, b"\x00" * len_zpad, ci, sid)


def element_derivation(h64):
    out = ctypes.create_string_buffer(32)
    assert len(h64) == 64
    if _s.crypto_core_ristretto255_from_hash(out, h64) != 0:
        raise PairingError("internal")
    return out.raw


def calc_generator(prs, ci, sid):
    gs = generator_string(prs, ci, sid)
    return gs, element_derivation(hashlib.sha512(gs).digest())


def scalar_reduce(seed64):
    assert len(seed64) == 64
    out = ctypes.create_string_buffer(32)
    _s.crypto_core_ristretto255_scalar_reduce(out, seed64)
    return out.raw


def scalarmult(y, P):
    out = ctypes.create_string_buffer(32)
    if _s.crypto_scalarmult_ristretto255(out, y, P) != 0:
        return None
    return out.raw


def isk(sid, K, Ya, Yb, ADa=b"", ADb=b""):
    data = lv_cat(DSI + b"_ISK", sid, K) + lv_cat(Ya, ADa) + lv_cat(Yb, ADb)
    return hashlib.sha512(data).digest()


def derive_keys(ISK):
    kS = hashlib.blake2b(LABEL_S, key=ISK, digest_size=32).digest()
    kR = hashlib.blake2b(LABEL_R, key=ISK, digest_size=32).digest()
    return kS, kR


def nonce(counter):
    return b"\x00" * 16 + counter.to_bytes(8, "big")


def seal(key, counter, ad, pt):
    c = ctypes.create_string_buffer(len(pt) + 16)
    clen = ctypes.c_ulonglong()
    r = _s.crypto_aead_xchacha20poly1305_ietf_encrypt(
        c, ctypes.byref(clen), pt, ctypes.c_ulonglong(len(pt)), ad, ctypes.c_ulonglong(len(ad)),
        None, nonce(counter), key)
    assert r == 0
    return c.raw[: clen.value]


def open_(key, counter, ad, ct):
    if len(ct) < 16:
        return None
    m = ctypes.create_string_buffer(max(1, len(ct) - 16))
    mlen = ctypes.c_ulonglong()
    r = _s.crypto_aead_xchacha20poly1305_ietf_decrypt(
        m, ctypes.byref(mlen), None, ct, ctypes.c_ulonglong(len(ct)), ad, ctypes.c_ulonglong(len(ad)),
        nonce(counter), key)
    if r != 0:
        return None
    return m.raw[: mlen.value]


def x25519_public(secret):
    out = ctypes.create_string_buffer(32)
    assert _s.crypto_scalarmult_curve25519_base(out, secret) == 0
    return out.raw


def x25519(secret, public):
    out = ctypes.create_string_buffer(32)
    if _s.crypto_scalarmult_curve25519(out, secret, public) != 0:
        return None
    return out.raw


def valid_name(n):
    return 1 <= len(n) <= 32 and all(b in NAME_ALPHABET for b in n) and n[0:1] != b"."


def check_intro(pt, own_secret):
    key, name = pt[:32], pt[32:]
    if len(key) != 32 or not valid_name(name):
        raise PairingError("badIntroduction")
    if key == b"\x00" * 32 or x25519(own_secret, key) in (None, b"\x00" * 32):
        raise PairingError("badIntroduction")
    return key, name


class Sender:
    """CPace initiator A."""

    def __init__(self, typed_code, static_secret, name, rand):
        self.prs = parse_code(typed_code)
        self.secret = static_secret
        self.public = x25519_public(static_secret)
        self.name = name
        self.rand = rand  # callable(n) -> n random bytes
        self.trace = {}

    def message1(self):
        self.sid = self.rand(16)
        while True:
            self.y = scalar_reduce(self.rand(64))
            if self.y != b"\x00" * 32:
                break
        gs, g = calc_generator(self.prs, PAIRING_CI, self.sid)
        self.Ya = scalarmult(self.y, g)
        if self.Ya is None:
            raise PairingError("internal")
        self.P1 = bytes([PAIRING_MODE]) + self.sid + self.Ya
        self.trace.update(generator_string=gs, generator=g, sender_scalar=self.y, Ya=self.Ya, sid=self.sid)
        return self.P1

    def read_message2(self, m):
        if len(m) == 1:
            if m == REFUSED:
                raise PairingError("notPairing")
            if m == BUSY:
                raise PairingError("busy")
            raise PairingError("malformed")
        if not (81 <= len(m) <= 112):
            raise PairingError("malformed")
        Yb = m[:32]
        K = scalarmult(self.y, Yb)
        if K is None:
            raise PairingError("badShare")
        self.ISK = isk(self.sid, K, self.Ya, Yb)
        self.kS, self.kR = derive_keys(self.ISK)
        self.AD = self.P1 + Yb
        self.trace.update(Yb=Yb, K=K, ISK=self.ISK, k_S=self.kS, k_R=self.kR, associated_data=self.AD)
        pt = open_(self.kR, 0, self.AD, m[32:])
        if pt is None:
            raise PairingError("wrongCode")
        self.peer_key, self.peer_name = check_intro(pt, self.secret)
        return seal(self.kS, 0, self.AD, self.public + self.name)

    def read_message4(self, m):
        if len(m) != 17:
            raise PairingError("didNotFinish")
        pt = open_(self.kR, 1, self.AD, m)
        if pt != PINNED:
            raise PairingError("didNotFinish")
        self.pinned = (self.peer_key, self.peer_name)
        return self.pinned


class Receiver:
    """CPace responder B."""

    def __init__(self, shown_code, static_secret, name, rand):
        self.prs = parse_code(shown_code)  # shown as "0123 4567"; PRS is the 8 digits
        self.secret = static_secret
        self.public = x25519_public(static_secret)
        self.name = name
        self.rand = rand
        self.trace = {}
        self.pinned = None

    def read_message1(self, m):
        if len(m) != 49 or m[0] != PAIRING_MODE:
            return REFUSED
        sid, Ya = m[1:17], m[17:49]
        gs, g = calc_generator(self.prs, PAIRING_CI, sid)
        while True:
            self.y = scalar_reduce(self.rand(64))
            if self.y != b"\x00" * 32:
                break
        Yb = scalarmult(self.y, g)
        if Yb is None:
            raise PairingError("internal")
        K = scalarmult(self.y, Ya)
        if K is None:
            return REFUSED
        self.ISK = isk(sid, K, Ya, Yb)
        self.kS, self.kR = derive_keys(self.ISK)
        self.AD = m + Yb
        self.trace.update(generator_string=gs, generator=g, receiver_scalar=self.y, Yb=Yb, K=K,
                          ISK=self.ISK, k_S=self.kS, k_R=self.kR, associated_data=self.AD, Ya=Ya, sid=sid)
        return Yb + seal(self.kR, 0, self.AD, self.public + self.name)

    def read_message3(self, m):
        if not (49 <= len(m) <= 80):
            raise PairingError("malformed")
        pt = open_(self.kS, 0, self.AD, m)
        if pt is None:
            raise PairingError("wrongCode")
        key, name = check_intro(pt, self.secret)
        self.pinned = (key, name)
        return seal(self.kR, 1, self.AD, PINNED)

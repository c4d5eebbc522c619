#!/usr/bin/env python3
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pairing as P

VEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Vectors", "blesend", "pairing-messages.json")
doc = json.load(open(VEC))
assert doc["format"] == "blesend-pairing-vector 1"
fails = 0
results = []


def cmp(run, label, got, want):
    global fails
    ok = got == want
    if not ok:
        fails += 1
    results.append((run, label, ok))
    print(f"{'PASS' if ok else 'FAIL'}  {run:10s} {label}" + ("" if ok else f"\n      got  {got!r}\n      want {want!r}"))


def scripted(*chunks):
    q = list(chunks)
    def rand(n):
        c = q.pop(0)
        assert len(c) == n, (len(c), n)
        return c
    rand.left = q
    return rand


for v in doc["vectors"]:
    run = v["name"]
    h = bytes.fromhex
    cmp(run, "channel_identifier == PairingCI", v["channel_identifier"], P.PAIRING_CI.hex())
    cmp(run, "sender_public from sender_secret", P.x25519_public(h(v["sender_secret"])).hex(), v["sender_public"])
    cmp(run, "receiver_public from receiver_secret", P.x25519_public(h(v["receiver_secret"])).hex(), v["receiver_public"])

    srand = scripted(h(v["sid"]), h(v["sender_scalar_seed"]))
    rrand = scripted(h(v["receiver_scalar_seed"]))
    S = P.Sender(v["sender_code"], h(v["sender_secret"]), v["sender_name"].encode(), srand)
    R = P.Receiver(v["receiver_code"], h(v["receiver_secret"]), v["receiver_name"].encode(), rrand)

    # --- Sender replay: produce P1 ---
    p1 = S.message1()
    cmp(run, "P1 (sender)", p1.hex(), v["P1"])
    # --- Receiver replay: fed the file's P1, produce P2 ---
    p2 = R.read_message1(h(v["P1"]))
    cmp(run, "P2 (receiver)", p2.hex(), v["P2"])
    cmp(run, "receiver drew exactly the scripted bytes", rrand.left, [])

    expect = v["expect"]
    # --- Sender fed the file's P2 ---
    try:
        p3 = S.read_message2(h(v["P2"]))
        err2 = None
    except P.PairingError as e:
        p3, err2 = None, e.code
    cmp(run, "sender drew exactly the scripted bytes", srand.left, [])

    if expect == "success":
        cmp(run, "sender reads P2 without error", err2, None)
        for key in ["generator_string", "generator", "Ya"]:
            cmp(run, f"{key} (sender)", S.trace[key].hex(), v[key])
            cmp(run, f"{key} (receiver)", (R.trace[key] if key in R.trace else b"").hex(), v[key]) if key != "Ya" else None
        cmp(run, "sender_scalar", S.trace["sender_scalar"].hex(), v["sender_scalar"])
        cmp(run, "receiver_scalar", R.trace["receiver_scalar"].hex(), v["receiver_scalar"])
        for key in ["Yb", "K", "ISK", "k_S", "k_R", "associated_data"]:
            cmp(run, f"{key} (sender)", S.trace[key].hex(), v[key])
            cmp(run, f"{key} (receiver)", R.trace[key].hex(), v[key])
        cmp(run, "P3 (sender)", p3.hex() if p3 else None, v["P3"])
        # Receiver fed the file's P3
        p4 = R.read_message3(h(v["P3"]))
        cmp(run, "P4 (receiver)", p4.hex(), v["P4"])
        cmp(run, "receiver pinned sender key+name", R.pinned, (h(v["sender_public"]), v["sender_name"].encode()))
        pinned = S.read_message4(h(v["P4"]))
        cmp(run, "sender pinned receiver key+name", pinned, (h(v["receiver_public"]), v["receiver_name"].encode()))
        cmp(run, "message lengths 49/81..112/49..80/17",
            (len(h(v["P1"])), 81 <= len(h(v["P2"])) <= 112, 49 <= len(h(v["P3"])) <= 80, len(h(v["P4"]))), (49, True, True, 17))
    else:
        assert v["raised_by"] == "sender"
        cmp(run, f"sender fails on P2 with {expect}", err2, expect)
        cmp(run, "file has no P3/P4", ("P3" in v, "P4" in v), (False, False))
        cmp(run, "sender pinned nothing", getattr(S, "pinned", None), None)
        cmp(run, "receiver pinned nothing", R.pinned, None)
        # extra: codes differ so the receiver, given any P3 the sender could make, would fail too
        S2 = P.Sender(v["sender_code"], h(v["sender_secret"]), v["sender_name"].encode(),
                      scripted(h(v["sid"]), h(v["sender_scalar_seed"])))
        S2.message1()
        try:
            S2.read_message2(h(v["P2"]))
        except P.PairingError:
            pass
        forged_p3 = P.seal(S2.kS, 0, S2.AD, S2.public + S2.name)
        try:
            R.read_message3(forged_p3)
            rerr = None
        except P.PairingError as e:
            rerr = e.code
        cmp(run, "receiver also rejects a P3 sealed under the wrong-code key", rerr, "wrongCode")

print()
print(f"{len(results) - fails}/{len(results)} passed")
sys.exit(1 if fails else 0)

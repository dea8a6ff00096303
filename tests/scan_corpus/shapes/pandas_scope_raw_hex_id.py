import struct


def raw_hex_id(obj) -> str:
    packed = struct.pack("@P", id(obj))  # corpus: sink
    return "".join(f"{b:02x}" for b in packed)

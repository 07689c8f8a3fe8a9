#!/usr/bin/env python3
"""Writes the regression seeds of fuzz_summary_reader and fuzz_nsys_grammar (issue #40's defects), each an
input in the target's own encoding (see the targets' headers), into tests/fuzz/corpus/<target>/regress_*.
Run from the repository root; the seeds are committed, so this only needs running again when an encoding
changes. Deterministic: the same bytes on every run."""
import os
import sqlite3
import struct
import zlib

CORPUS = "tests/fuzz/corpus"


def write(target, name, data):
    os.makedirs(f"{CORPUS}/{target}", exist_ok=True)
    with open(f"{CORPUS}/{target}/{name}", "wb") as f:
        f.write(data)


def le64(v):
    return struct.pack("<q", v) if v < 0 else struct.pack("<Q", v)


def record(raw):  # a report record: its inflated size, then zlib
    return le64(len(raw)) + zlib.compress(raw, 6)


# fuzz_summary_reader: byte 0 % 3 picks the edit of summary_rank0.sqlite.
RECORD, META, TABLE = 0, 1, 2
META_KEYS = ["schema_version", "rank", "world_size", "rank_given", "source", "format", "clock_mapped",
             "trace_bytes", "run_config", "wall_start_ns", "distributed", "unknown_key"]
INT, TEXT, DELETE = 1, 3, 5


def meta(key, op, value=b""):
    return bytes([META, META_KEYS.index(key), op]) + value


s = "fuzz_summary_reader"
base = sqlite3.connect(f"file:{CORPUS}/{s}/summary_rank0.sqlite?mode=ro", uri=True)
good = zlib.decompress(base.execute("SELECT cbor FROM report").fetchone()[0][8:])
# run_config and the report record nesting 100,000 deep (crashed report, diff, the viewer and --mpi).
write(s, "regress_run_config_100000_deep", meta("run_config", TEXT, b"[" * 100000))
write(s, "regress_record_100000_deep", bytes([RECORD]) + record(b"\x81" * 100000 + b"\xf6"))
# meta.rank -1 and 2^63 - 1 (accepted; the JSON report listed rank -1).
write(s, "regress_rank_minus_1", meta("rank", INT, le64(-1)))
write(s, "regress_rank_int64_max", meta("rank", INT, le64(2**63 - 1)))
# A damaged CBOR record (printed nlohmann's "[json.exception.parse_error.110]").
write(s, "regress_record_damaged_cbor", bytes([RECORD]) + record(good[: len(good) // 2]))
# A record claiming 1 GiB (inflated whole first, 10-14 s).
write(s, "regress_record_claims_1gib", bytes([RECORD]) + le64(1 << 30) + zlib.compress(b"\0" * 100000, 9))
# No schema version (called "not an Nsight Systems export").
write(s, "regress_no_schema_version", meta("schema_version", DELETE))

# fuzz_nsys_grammar: byte 0 the journal mode (odd: WAL), byte 1 the statements (1 + b % 12), then each
# statement: name, other, kind (0-2 table, 3 view over other, 4 recursive view, 5 trigger, 6 virtual table).
TABLES = ["StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
          "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", "CUPTI_ACTIVITY_KIND_RUNTIME",
          "NVTX_EVENTS", "NVTX_PAYLOAD_SCHEMAS", "NVTX_PAYLOAD_SCHEMA_ENTRIES", "PROCESSES", "ThreadNames",
          "TARGET_INFO_SESSION_START_TIME", "META_DATA_EXPORT", "META_DATA_CAPTURE", "EXPORT_META_DATA",
          "NCCL_OPERATIONS", "OTHER_TABLE", "CUPTI_ACTIVITY_KIND_DEVICE_GRAPH_TRACE", "VULKAN_WORKLOAD",
          "OPENGL_WORKLOAD", "DX12_WORKLOAD"]
COLUMNS = ["id", "value", "start", "end", "deviceId", "streamId", "correlationId", "globalPid", "globalTid",
           "shortName", "demangledName", "bytes", "copyKind", "syncType", "nameId", "eventType", "text", "textId",
           "domainId", "jsonText", "binaryData", "schemaId", "type", "offset", "idx", "payloadSize", "int64Value",
           "pid", "name", "utcEpochNs", "gridX", "blockX", "graphId", "commHash", "seqNumber", "operationId",
           "messageSize", "nranks", "nRanks", "numRanks", "commSize", "commNranks", "groupSize"]
TYPES = ["INTEGER", "TEXT", "REAL", "BLOB", ""]
STRINGS = ["EXPORT_SCHEMA_VERSION", "EXPORT_PRODUCT_VERSION", "PROCESS_0:PID", "PROCESS_0:ENVIRONMENT_VARIABLE",
           "RANK=1", "WORLD_SIZE=2", "RANK=-1", "WORLD_SIZE=9223372036854775807", "3.11"]
RECURSIVE_VIEW, VIRTUAL, TRIGGER = 4, 6, 5


def table(name, cols, rows):  # cols: [(column, type)]; rows: lists of ("int", v) / ("str", s)
    out = bytes([TABLES.index(name), 0, 0, len(cols) - 1])
    out += bytes(COLUMNS.index(c) for c, _ in cols)  # the columns, then their types
    out += bytes(TYPES.index(t) for _, t in cols)
    out += bytes([len(rows)])
    for row in rows:
        for kind, v in row:
            out += bytes([1]) + le64(v) if kind == "int" else bytes([3, STRINGS.index(v)])
    return out


def export(wal, statements):
    return bytes([wal, len(statements) - 1]) + b"".join(statements)


meta_rows = table("META_DATA_EXPORT", [("name", "TEXT"), ("value", "TEXT")],
                  [[("str", "EXPORT_SCHEMA_VERSION"), ("str", "3.11")]])
kernel_rows = table("CUPTI_ACTIVITY_KIND_KERNEL",
                    [("start", "INTEGER"), ("end", "INTEGER"), ("deviceId", "INTEGER"), ("streamId", "INTEGER"),
                     ("correlationId", "INTEGER"), ("globalPid", "INTEGER"), ("shortName", "INTEGER")],
                    [[("int", 100), ("int", 200), ("int", 0), ("int", 7), ("int", 1), ("int", 1 << 24), ("int", 1)]])
strings = table("StringIds", [("id", "INTEGER"), ("value", "TEXT")], [[("int", 1), ("str", "3.11")]])
g = "fuzz_nsys_grammar"
# The kernel table an endless recursive view (33 s and 4.1 GB before "out of memory").
write(g, "regress_recursive_view",
      export(0, [meta_rows, strings, bytes([TABLES.index("CUPTI_ACTIVITY_KIND_KERNEL"), 0, RECURSIVE_VIEW])]))
# A WAL-mode database (got -wal and -shm files created beside it).
write(g, "regress_wal_mode", export(1, [meta_rows, strings, kernel_rows]))
# A trigger on the kernel table and StringIds a virtual table: declared, never run.
write(g, "regress_trigger_virtual_table",
      export(0, [meta_rows, kernel_rows,
                 bytes([TABLES.index("StringIds"), TABLES.index("CUPTI_ACTIVITY_KIND_KERNEL"), TRIGGER]),
                 bytes([TABLES.index("StringIds"), 0, VIRTUAL, 0])]))

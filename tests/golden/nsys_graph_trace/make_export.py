#!/usr/bin/env python3
"""Writes graphs.sqlite: a constructed Nsight Systems export (not recorded) of one process in graph-trace mode
(`--cuda-graph-trace=graph`, nsys's default), with the tables and columns real exports have (the activity
tables as Nsight Systems 2026.2 declares them, CUPTI_ACTIVITY_KIND_GRAPH_TRACE as a real 2024.3 capture's).
Times are ns from the session start; none is a whole µs, so HTA's µs rounding and the exact figures differ.

usage: make_export.py  (writes graphs.sqlite beside itself)
"""

import os
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))
PID = 4242
GPID = (1 << 48) | (PID << 24)  # a VM id above the pid, as exports pack it
GTID = GPID | 4243
UTC = 1_700_000_000_000_000_000

# (start, end, stream, correlationId, name) of eager kernels; (start, end, stream, correlationId, graphId,
# graphExecId) of graph launches; (start, end, stream, correlationId, bytes) of one copy.
KERNELS = [
    (1_300, 2_700, 7, 1, "gemm_kernel"),
    (2_100, 4_050, 20, 2, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
]
GRAPHS = [(3_400, 6_250, 13, 3, 7, 1), (8_100, 11_050, 13, 5, 7, 1), (12_050, 12_600, 13, 6, 9, 2)]
COPY = (6_500, 7_000, 7, 4, 1_048_576)
# (start, end, correlationId, name) of the CUDA calls that launched them.
CALLS = [(1_000, 1_200, 1, "cudaLaunchKernel_v7000"), (1_900, 2_000, 2, "cudaLaunchKernel_v7000"),
         (3_000, 3_300, 3, "cudaGraphLaunch_v10000"), (6_300, 6_400, 4, "cudaMemcpyAsync_v3020"),
         (7_900, 8_000, 5, "cudaGraphLaunch_v10000"), (11_900, 12_000, 6, "cudaGraphLaunch_v10000")]


def main():
    path = os.path.join(HERE, "graphs.sqlite")
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.executescript(f"""
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs INTEGER);
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
CREATE TABLE META_DATA_CAPTURE (name TEXT, value TEXT);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
  shortName INTEGER NOT NULL, graphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
  copyKind INTEGER NOT NULL, graphNodeId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER, bytes INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  contextId INTEGER, greenContextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
  graphId INTEGER, graphExecId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text TEXT,
  globalTid INTEGER, textId INTEGER, domainId INTEGER);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES ({UTC}, '', '', 0);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.25.0'), ('EXPORT_PRODUCT_VERSION', '2026.2');
INSERT INTO PROCESSES VALUES ({GPID}, {PID}, 'python3');
""")
    ids = {}

    def sid(v):
        if v not in ids:
            ids[v] = len(ids) + 1
            db.execute("INSERT INTO StringIds VALUES (?, ?)", (ids[v], v))
        return ids[v]

    db.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (sid("python3"), GTID))
    for s, e, corr, name in CALLS:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, ?, 0)", (s, e, GTID, corr, sid(name)))
    for s, e, stream, corr, name in KERNELS:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, ?, ?, ?, ?, ?, NULL)",
                   (s, e, stream, corr, GPID, sid(name), sid(name)))
    for s, e, stream, corr, graph, exec_ in GRAPHS:
        db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (?, ?, 0, 1, 0, ?, ?, ?, ?, ?)",
                   (s, e, stream, corr, GPID, graph, exec_))
    s, e, stream, corr, nbytes = COPY
    db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, 0, ?, ?, ?, ?, 1, NULL)",
               (s, e, stream, corr, GPID, nbytes))
    db.commit()
    db.execute("VACUUM")
    db.close()


if __name__ == "__main__":
    main()

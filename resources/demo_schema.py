"""The nsys 2023.4 (export schema 3.7.2) tables the demo reports use, and their enum rows.

Written from the DDL of a real ``nsys export --type sqlite`` of nsys 2023.4.4 (column names,
types, NOT NULL and PRIMARY KEY exactly as nsys writes them; nsys's column comments left out).
Abbreviated here to keep the module short: ``INT`` is ``INTEGER``, ``NN`` is ``NOT NULL``,
``PK`` is ``PRIMARY KEY``. spec: nsys-sqlite.md §1.
"""

from __future__ import annotations

import sqlite3

__all__ = ["ENUMS", "TABLES", "create_schema"]

#: table -> column definitions (abbreviated, see the module docstring)
TABLES: dict[str, str] = {
    "StringIds": ("id INT NN PK, value TEXT NN"),
    "ThreadNames": ("nameId INT NN, priority INT, globalTid INT"),
    "PROCESSES": ("globalPid INT, pid INT, name TEXT"),
    "TARGET_INFO_SESSION_START_TIME": ("utcEpochNs INT, utcTime TEXT, localTime TEXT"),
    "ANALYSIS_DETAILS": ("globalVid INT NN, duration INT NN, startTime INT NN, stopTime INT NN"),
    "TARGET_INFO_GPU": (
        "vmId INT NN, id INT NN, name TEXT, busLocation TEXT, isDiscrete INT, l2CacheSize INT, "
        "totalMemory INT, memoryBandwidth INT, clockRate INT, smCount INT, pwGpuId INT, uuid "
        "TEXT, luid INT, chipName TEXT, cuDevice INT, ctxswDevPath TEXT, ctrlDevPath TEXT, "
        "revision INT, nodeMask INT, constantMemory INT, maxIPC INT, maxRegistersPerBlock INT, "
        "maxShmemPerBlock INT, maxShmemPerBlockOptin INT, maxShmemPerSm INT, maxRegistersPerSm "
        "INT, threadsPerWarp INT, asyncEngines INT, maxWarpsPerSm INT, maxBlocksPerSm INT, "
        "maxThreadsPerBlock INT, maxBlockDimX INT, maxBlockDimY INT, maxBlockDimZ INT, "
        "maxGridDimX INT, maxGridDimY INT, maxGridDimZ INT, computeMajor INT, computeMinor INT, "
        "smMajor INT, smMinor INT"
    ),
    "TARGET_INFO_CUDA_STREAM": (
        "streamId INT NN, hwId INT NN, vmId INT NN, processId INT NN, contextId INT NN, priority "
        "INT NN, flag INT NN"
    ),
    "TARGET_INFO_CUDA_CONTEXT_INFO": (
        "nullStreamId INT NN, hwId INT NN, vmId INT NN, processId INT NN, deviceId INT NN, "
        "contextId INT NN, parentContextId INT, isGreenContext INT"
    ),
    "META_DATA_EXPORT": ("name TEXT NN, value TEXT"),
    "META_DATA_CAPTURE": ("name TEXT NN, value TEXT"),
    "CUPTI_ACTIVITY_KIND_KERNEL": (
        "start INT NN, end INT NN, deviceId INT NN, contextId INT NN, greenContextId INT, "
        "streamId INT NN, correlationId INT, globalPid INT, demangledName INT NN, shortName INT "
        "NN, mangledName INT, launchType INT, cacheConfig INT, registersPerThread INT NN, gridX "
        "INT NN, gridY INT NN, gridZ INT NN, blockX INT NN, blockY INT NN, blockZ INT NN, "
        "staticSharedMemory INT NN, dynamicSharedMemory INT NN, localMemoryPerThread INT NN, "
        "localMemoryTotal INT NN, gridId INT NN, sharedMemoryExecuted INT, graphNodeId INT, "
        "sharedMemoryLimitConfig INT"
    ),
    "CUPTI_ACTIVITY_KIND_RUNTIME": (
        "start INT NN, end INT NN, eventClass INT NN, globalTid INT, correlationId INT, nameId "
        "INT NN, returnValue INT NN, callchainId INT"
    ),
    "CUPTI_ACTIVITY_KIND_MEMCPY": (
        "start INT NN, end INT NN, deviceId INT NN, contextId INT NN, greenContextId INT, "
        "streamId INT NN, correlationId INT, globalPid INT, bytes INT NN, copyKind INT NN, "
        "deprecatedSrcId INT, srcKind INT, dstKind INT, srcDeviceId INT, srcContextId INT, "
        "dstDeviceId INT, dstContextId INT, migrationCause INT, graphNodeId INT, virtualAddress "
        "INT"
    ),
    "CUPTI_ACTIVITY_KIND_MEMSET": (
        "start INT NN, end INT NN, deviceId INT NN, contextId INT NN, greenContextId INT, "
        "streamId INT NN, correlationId INT, globalPid INT, value INT NN, bytes INT NN, "
        "graphNodeId INT, memKind INT"
    ),
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": (
        "start INT NN, end INT NN, deviceId INT NN, contextId INT NN, greenContextId INT, "
        "streamId INT NN, correlationId INT, globalPid INT, syncType INT NN, eventId INT NN"
    ),
    "NVTX_EVENTS": (
        "start INT NN, end INT, eventType INT NN, rangeId INT, category INT, color INT, text "
        "TEXT, globalTid INT, endGlobalTid INT, textId INT, domainId INT, uint64Value INT, "
        "int64Value INT, doubleValue REAL, uint32Value INT, int32Value INT, floatValue REAL, "
        "jsonTextId INT, jsonText TEXT"
    ),
    "OSRT_API": (
        "start INT NN, end INT NN, eventClass INT NN, globalTid INT, nameId INT NN, returnValue "
        "INT NN, nestingLevel INT, callchainId INT NN"
    ),
    "SCHED_EVENTS": ("start INT NN, cpu INT NN, isSchedIn INT NN, globalTid INT"),
    "COMPOSITE_EVENTS": (
        "id INT NN PK, start INT NN, cpu INT, threadState INT, globalTid INT, cpuCycles INT NN"
    ),
}

_ENUM_COLUMNS = "id INT NN PK, name TEXT, label TEXT"

#: ENUM_* table -> ((id, name, label), ...) as nsys 2023.4 writes them (spec §1.11).
ENUMS: dict[str, tuple[tuple[int, str, str], ...]] = {
    "ENUM_CUDA_MEMCPY_OPER": tuple(
        (i, f"CUDA_MEMCPY_KIND_{name}", label)
        for i, (name, label) in enumerate(
            [
                ("UNKNOWN", "Unknown"),
                ("HTOD", "Host-to-Device"),
                ("DTOH", "Device-to-Host"),
                ("HTOA", "Host-to-Array"),
                ("ATOH", "Array-to-Host"),
                ("ATOA", "Array-to-Array"),
                ("ATOD", "Array-to-Device"),
                ("DTOA", "Device-to-Array"),
                ("DTOD", "Device-to-Device"),
                ("HTOH", "Host-to-Host"),
                ("PTOP", "Peer-to-Peer"),
                ("UVM_HTOD", "Unified Host-to-Device"),
                ("UVM_DTOH", "Unified Device-to-Host"),
                ("UVM_DTOD", "Unified Device-to-Device"),
            ]
        )
    ),
    "ENUM_CUDA_MEM_KIND": tuple(
        (i, f"CUDA_MEMOPR_MEMORY_KIND_{name}", label)
        for i, (name, label) in enumerate(
            [
                ("PAGEABLE", "Pageable"),
                ("PINNED", "Pinned"),
                ("DEVICE", "Device"),
                ("ARRAY", "Array"),
                ("MANAGED", "Managed"),
                ("DEVICE_STATIC", "Device Static"),
                ("MANAGED_STATIC", "Managed Static"),
                ("UNKNOWN", "Unknown"),
            ]
        )
    ),
    "ENUM_CUPTI_SYNC_TYPE": tuple(
        (i, f"CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_{name}", label)
        for i, (name, label) in enumerate(
            [
                ("UNKNOWN", "Unknown"),
                ("EVENT_SYNCHRONIZE", "Event sync"),
                ("STREAM_WAIT_EVENT", "Stream wait sync"),
                ("STREAM_SYNCHRONIZE", "Stream sync"),
                ("CONTEXT_SYNCHRONIZE", "Context sync"),
            ]
        )
    ),
    "ENUM_CUPTI_STREAM_TYPE": tuple(
        (i, f"CUPTI_ACTIVITY_STREAM_CREATE_FLAG_{name}", label)
        for i, (name, label) in enumerate(
            [
                ("UNKNOWN", "Unknown stream type"),
                ("DEFAULT", "Default stream"),
                ("NON_BLOCKING", "Non-blocking stream"),
                ("NULL", "Null stream"),
            ]
        )
    ),
    "ENUM_CUDA_KERNEL_LAUNCH_TYPE": tuple(
        (i, f"CUDA_KERNEL_LAUNCH_TYPE_{name}", label)
        for i, (name, label) in enumerate(
            [
                ("UNKNOWN", "Unknown"),
                ("REGULAR", "Regular"),
                ("COOPERATIVE_SINGLE_DEVICE", "Coop Single Device"),
                ("COOPERATIVE_MULTI_DEVICE", "Coop Multi Device"),
            ]
        )
    ),
    "ENUM_CUDA_FUNC_CACHE_CONFIG": (
        (0, "CU_FUNC_CACHE_PREFER_NONE", "None"),
        (1, "CU_FUNC_CACHE_PREFER_SHARED", "Shared"),
        (2, "CU_FUNC_CACHE_PREFER_L1", "L1"),
        (3, "CU_FUNC_CACHE_PREFER_EQUAL", "Equal"),
    ),
    "ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG": (
        (0, "CUDA_SHARED_MEM_LIMIT_DEFAULT", "Default"),
        (1, "CUDA_SHARED_MEM_LIMIT_OPTIN", "Opt in"),
    ),
    "ENUM_SAMPLING_THREAD_STATE": tuple(
        (i, name, label)
        for i, (name, label) in enumerate(
            [
                ("Unknown", "Unknown"),
                ("Running", "Running"),
                ("Interruptible", "Interruptible"),
                ("Uninterruptible", "Uninterruptible"),
                ("Stopped", "Stopped"),
                ("Terminated", "Terminated"),
                ("Unscheduled", "Unscheduled"),
                ("Waiting", "Waiting"),
                ("OSRuntime", "OS runtime"),
                ("Initialized", "Initialized"),
                ("Transition", "Transition"),
            ]
        )
    ),
    # The demo writes a subset of the event classes and types (those its rows reference).
    "ENUM_NSYS_EVENT_CLASS": (
        (0, "TRACE_PROCESS_EVENT_CUDA_RUNTIME", "CUDA runtime"),
        (1, "TRACE_PROCESS_EVENT_CUDA_DRIVER", "CUDA driver"),
        (26, "TRACE_PROCESS_EVENT_CUDA_API", "CUDA API"),
        (27, "TRACE_PROCESS_EVENT_OS_RUNTIME", "OSRT runtime"),
        (31, "TRACE_PROCESS_EVENT_OS_RUNTIME_START", "OSRT start"),
        (32, "TRACE_PROCESS_EVENT_OS_RUNTIME_FINISH", "OSRT finish"),
    ),
    "ENUM_NSYS_EVENT_TYPE": tuple(
        (i, name, name)
        for i, name in (
            (33, "NvtxCategory"),
            (34, "NvtxMark"),
            (35, "NvtxPushRange"),
            (36, "NvtxPopRange"),
            (37, "NvtxStartRange"),
            (38, "NvtxEndRange"),
            (39, "NvtxThread"),
            (59, "NvtxPushPopRange"),
            (60, "NvtxStartEndRange"),
            (75, "NvtxDomainCreate"),
            (76, "NvtxDomainDestroy"),
        )
    ),
}

_ABBREVIATIONS = (
    ("INT ", "INTEGER "),
    ("INT,", "INTEGER,"),
    (" NN", " NOT NULL"),
    (" PK", " PRIMARY KEY"),
)


def _ddl(table: str, columns: str) -> str:
    text = columns + ","
    for short, full in _ABBREVIATIONS:
        text = text.replace(short, full)
    if text.endswith(" INT,"):
        text = text[: -len(" INT,")] + " INTEGER,"
    return f"CREATE TABLE {table} ({text[:-1]})"


def create_schema(conn: sqlite3.Connection) -> None:
    """Create every demo table (empty) and fill the ENUM tables."""
    for table, columns in TABLES.items():
        conn.execute(_ddl(table, columns))
    for table, rows in ENUMS.items():
        if table not in TABLES:
            conn.execute(_ddl(table, _ENUM_COLUMNS))
        conn.executemany(f"INSERT INTO {table} (id, name, label) VALUES (?, ?, ?)", rows)

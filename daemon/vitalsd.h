/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every module header of the daemon at once, for the tests, fuzzers and
 * benches only. The daemon's own files never include this: each includes
 * the module headers it uses (doc/architecture.md lists them).
 *
 * Conventions of every header: functions return 0 or -errno;
 * out-parameters are named ret_* and are left untouched on failure;
 * x_free() accepts NULL.
 */
#ifndef VITALSD_H
#define VITALSD_H

#include "cgroup/cgroup.h"
#include "fgbg/fgbg.h"
#include "wcpu/wcpu.h"
#include "dmabuf/dmabuf.h"
#include "gpufreq/gpufreq.h"
#include "syscalls/sc_window.h"
#include "config/config.h"
#include "config/config_reload.h"
#include "control/control.h"
#include "core/bpf_common.h"
#include "core/log.h"
#include "core/provenance.h"
#include "core/util.h"
#include "daemon.h"
#include "export/export.h"
#include "gpumem/gpumem.h"
#include "hp/hp.h"
#include "privs/privs.h"
#include "proc/proc.h"
#include "rpc/rpc.h"
#include "sched/sched.h"
#include "store/store.h"
#include "taskiter/taskiter.h"
#include "trace/trace.h"
#include "window/collector.h"
#include "window/window.h"
#include "wss/wss.h"

#endif /* VITALSD_H */

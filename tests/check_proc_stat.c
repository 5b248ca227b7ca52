/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proc_stat.c parsers against real file formats, byte for byte, and against
 * every way a read can go wrong: cut short, empty, garbage, overflow. Each
 * input is copied into a malloc'd buffer of its exact length so that ASan
 * catches any read past len.
 */
#include <check.h>
#include <errno.h>
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "vitalsd.h"

/* ------------------------------------------------------------- fixtures */

/* /proc/stat of a 2-CPU x86_64 VM, Linux 6.18. */
static const char x86_stat[] =
    "cpu  7381 0 2613 68327 457 0 141 238 0 0\n"
    "cpu0 3100 0 1023 35286 25 0 40 101 0 0\n"
    "cpu1 4281 0 1590 33040 432 0 101 136 0 0\n"
    "intr 172579 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 1"
    " 11 0 0 0 0 78 36 0 19 1 33645 0 497 433 0 1422 2781 1 0 0 0 0"
    " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
    " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
    " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
    " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
    " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
    " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
    " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
    " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
    " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
    " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
    " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
    " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
    " 0 0 0 0\n"
    "ctxt 288705\n"
    "btime 1796012283\n"
    "processes 7635\n"
    "procs_running 2\n"
    "procs_blocked 0\n"
    "softirq 101342 0 10360 3 937 33645 0 2 34084 0 22311\n";

/*
 * /proc/stat of an 8-CPU arm64 phone (Linux 5.10, Android 14) with cpu5
 * offline: its line is missing, but its frozen counters stay in "cpu".
 */
static const char android_stat[] =
    "cpu  1526351 260613 1085243 31450642 21831 158730 52776 0 0 0\n"
    "cpu0 270218 52170 265231 3507117 4952 57612 28437 0 0 0\n"
    "cpu1 268107 51822 236528 3617409 4711 29316 8004 0 0 0\n"
    "cpu2 261044 50713 221934 3667316 4525 26451 6741 0 0 0\n"
    "cpu3 257693 49911 214773 3686514 4398 25877 6329 0 0 0\n"
    "cpu4 161507 17644 45522 4172017 1003 6271 1151 0 0 0\n"
    "cpu6 97436 12806 30661 4296114 671 4101 627 0 0 0\n"
    "cpu7 89913 12545 29587 4302601 671 3590 584 0 0 0\n"
    "intr 98234517 0 34 47 0 351012 0 0 0 0 426920 0 0 0 0 0 0 0 0 0"
    " 0 84457269 0 0 0 34095834 58576 599279 0 0 0 0 0 0 0 893202 0"
    " 0 94796823 0 0 0 462867 0 122249 0 0 89660596 40007635 0 90 0"
    " 0 0 3 34329004 48 93 90 0 10 99 2 0 0 0 0 0 329736 0 0 0 0 0"
    " 644213 0 0 0 0 582126 999802 0 0 43 0 49 0 0 301790 0 0 0 0"
    " 427060 96 0 0 0 0 83373 0 0 0 0 0 0 0 0 0 924211 0 0 0 50 0 0"
    " 90342260 96 0 0 47 18 0 0 0 0 552282 0 0 0 0 0 0 0 0 292895 0"
    " 0 0 93 0 0 0 49 0 0 0 0 43 0 0 42 388668 0 48 0 601457 0 0 0 0"
    " 41 0 0 0 0 94 0 0 37 0 0 0 0 46 0 0 0 0 73 0 4123 0 0 57324079"
    " 0 966963 39 83612715 0 0 0 0 0 0 0 0 0 0 0 0 19 0 0 0 0 0 67"
    " 69 0 10 61 0 0 0 0 7337 0 40 358801 0 0 0 0 0 0 0 199369 0 0 0"
    " 141541 0 0 0 0 6 847710 0 80763148 0 0 3 0 0 29 0 0 0 313420"
    " 99 0 0 0 0 0 33 0 0 0 0 189467 43666399 0 0 0 0 0 0 0 7 72 0 0"
    " 43 0 0 830517 0 0 0 0 0 0 0 0 0 0 0 0 69 0 0 0 0 5 0 0 0 3"
    " 1274 0 329110 259648 0 0 137634 0 0 0 51 5 0 0 0 25 94 0 0 0 0"
    " 0 0 0 0 0 0 0 114885 0 0 0 985411 0 0 0 0 0 15977184 0 5 0 0 0"
    " 0 0 88170437 45 0 0 177554 0 0 0 215876 0 0 0 6 32 0 0 0 0"
    " 757837 664085 0 0 0 0 0 0 30 0 0 787885 44 0 37 0 0 30813715"
    " 90 0 0 0 0 731621 0 0 0 0 0 0 0 0 26 0 0 0 0 138286 0 0 74 0"
    " 30 0 0 0 31 71190021 0 0 0 0 0 65 48 0 0 0 0 0 21 35 0 0 0 46"
    " 0 512456 0 818986 0 126418 0 0 0 0 0 601589 0 91826181 0 0 0 0"
    " 0 0 0 0 0 0 0 0 0 0 0 811395 0 0 0 53 0 0 0 348662 629724 0 0"
    " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 38 49 0 0 0 619828 0 0"
    " 0 0 73 0 0 0 0 30 44 0 0 902530 0 0 68335655 11 0 0 0 6 0 0 0"
    " 22 0 0 0 0 0 0 0 0 0 0 0 0 61 0 0 0 0 55 0 0 0 52929 0 12 0 0"
    " 0 30666 0 0 0 801367 0 0 65 0 0 46 138341 0 0 0 0 0 0 0 0 0 0"
    " 0 0 0 70600283 561254 0 0 26327703 0 0 0 62 0 0 24171774 54 49"
    " 0 0 518775 15 0 0 0 0 0 0 0 376250 0 0 0 0 54 0 0 53290558 0 0"
    " 0 0 0 0 0 0 943076 0 0 3684023 0 0 0 0 24 0 0 0 39 0 0"
    " 28196909 6 7 0 0 0 0 602067 0 0 0 0 0 0 0 0 54 0 0 0 491851 0"
    " 0 74 0 0 0 51 0\n"
    "ctxt 1990473181\n"
    "btime 1717999123\n"
    "processes 2915044\n"
    "procs_running 3\n"
    "procs_blocked 1\n"
    "softirq 49817361 12 11828130 4321 3811297 0 0 6210432 14203981"
    " 0 13559188\n";

/* The same phone a moment later: cpu5 came back, cpu7 went offline. */
static const char android_stat_later[] =
    "cpu  1529951 264213 1088843 31454242 25431 162330 56376 0 0 0\n"
    "cpu0 270318 52270 265331 3507217 5052 57712 28537 0 0 0\n"
    "cpu1 268307 52022 236728 3617609 4911 29516 8204 0 0 0\n"
    "cpu2 261344 51013 222234 3667616 4825 26751 7041 0 0 0\n"
    "cpu3 258093 50311 215173 3686914 4798 26277 6729 0 0 0\n"
    "cpu4 162007 18144 46022 4172517 1503 6771 1651 0 0 0\n"
    "cpu5 121033 13602 41607 4202154 1500 6112 1503 0 0 0\n"
    "cpu6 98136 13506 31361 4296814 1371 4801 1327 0 0 0\n"
    "intr 98334517 0 28 0 0 981864 0 0 0 0 0 0 0 0 0 84192278 0 0 44"
    " 0 85 0 0 0 0 947111 0 0 0 0 0 0 0 0 0 707377 0 0 0 0 0 0 0 0"
    " 573955 0 0 0 0 53889850 76 96 0 0 0 893600 0 4 0 0 0 0 0 0"
    " 315427 0 0 0 626588 0 0 0 0 73 72 0 0 0 0 0 0 0 32 0 0"
    " 21403431 17 0 0 88881085 0 0 18 0 82 387901 851209 0 83196391"
    " 0 0 0 0 378251 0 13 115948 34 0 257629 0 0 714352 0 232656"
    " 958048 86 20177 0 0 0 0 0 54717381 0 0 0 59612130 0 0 0 0 0 36"
    " 0 97 0 0 8 0 0 155035 0 499314 45 0 73 0 0 18 0 49 0 0 70"
    " 48309 8 0 0 0 0 0 0 0 0 605113 0 268532 78 0 0 616414 0 0 0 0"
    " 0 0 0 0 75 36 47014 428535 0 0 842814 0 0 0 52 0 0 0 65 0 0 0"
    " 0 80104900 38 45 0 0 120207 0 0 0 442695 83 0 439311 0 789395"
    " 0 0 0 0 0 0 0 0 0 0 0 29 36 0 211878 0 0 430836 0 0 0 0 0 0 0"
    " 0 0 0 0 0 40901961 0 0 0 69 0 0 0 0 0 0 0 0 0 91709380 978565"
    " 0 0 0 0 0 0 342529 83 47 133169 0 0 446540 0 0 0 0 0 0 0 0 0 0"
    " 79 0 74 0 60 0 88503630 0 0 0 0 0 0 70 735165 0 0 65367453 0 0"
    " 0 0 51731662 0 68 0 0 0 68 0 20 0 83 0 0 0 0 0 0 384289 0 0"
    " 73551968 0 0 0 0 0 0 0 0 78367598 84 0 0 61 12 0 0 0 0 32 0 0"
    " 0 0 9 95 26710163 0 46100 0 1 58 0 0 0 0 0 0 0 0 0 0 0 0 6 88"
    " 72 406080 0 0 0 0 0 0 19 0 0 0 0 0 0 23 0 60349091 764840"
    " 965453 0 77 0 75 0 0 0 0 18 56199672 0 85 0 0 0 74 45 0 0"
    " 179791 58 0 0 0 63345 0 0 0 0 0 0 0 0 0 0 668213 0 0 725099 0"
    " 0 0 0 0 0 0 0 600775 93 0 50861063 0 0 0 0 0 0 0 0 0 0 0 0 65"
    " 505477 608908 181547 0 0 0 0 0 0 53542 484591 0 0 0 0 0 944375"
    " 0 0 0 0 0 0 0 37 0 0 0 0 17 0 0 0 0 0 0 550126 0 74805 0 0 0 0"
    " 0 96 0 248965 44 0 0 575777 64853312 70 25 0 0 0 0 0 0 0 0 0 0"
    " 41 54 0 0 0 48 0 0 0 0 0 0 0 540975 0 51 0 0 69 0 78220 418387"
    " 87514475 0 951001 763381 0 0 0 0 0 0 62 0 0 0 50 0 0 10 0 0 0"
    " 0 0 0 0 0 37 19 0 0 759274 114528 78 0 302362 0 0 64710946 0 0"
    " 0 0 0 58 0 0 0 0 0 0 69 0 0 0 0 0 0 416315 0 0 0 0 0 0 0 0 0 0"
    " 37365164 0 0 0 75994189 0 0 0 0 0 221359 0 765064 292351 0 0 0"
    " 0 3 0 0 0 0 0 0 0 63334224 0 0 293192 47 0 15 213601 0 0"
    " 839331 0 13 0 55055276 0 0 781054 0 83 833352 0 0 80594307 0"
    " 0\n"
    "ctxt 1990500000\n"
    "btime 1717999123\n"
    "processes 2915100\n"
    "procs_running 1\n"
    "procs_blocked 0\n"
    "softirq 49817361 12 11828130 4321 3811297 0 0 6210432 14203981"
    " 0 13559188\n";

/*
 * /proc/stat of Linux 2.4: four columns only, no procs_running or
 * procs_blocked, and a disk_io line.
 */
static const char old24_stat[] =
    "cpu  1279636934 73759586 192327563 12184330186\n"
    "cpu0 296474164 36918703 47917860 3013130101\n"
    "cpu1 317625498 12339880 48227479 2999046968\n"
    "page 5741 1808\n"
    "swap 1 0\n"
    "intr 1462898 1462898 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    "disk_io: (2,0):(31,30,5764,1,2) (3,0):(11,11,9356,0,0)\n"
    "ctxt 1990473\n"
    "btime 1062191376\n"
    "processes 2915\n";

/* Linux 2.6.11 .. 2.6.23: eight columns (steal, no guest). */
static const char k2611_stat[] =
    "cpu  2255 34 2290 22625563 6290 127 456 17\n"
    "cpu0 1132 34 1441 11311718 3675 127 438 9\n"
    "cpu1 1123 0 849 11313845 2614 0 18 8\n"
    "intr 114930548 113199788 3 0 5 263 5 0 4 0 0 0 0 0 0 0 0\n"
    "ctxt 1990473\n"
    "btime 1062191376\n"
    "processes 2915\n"
    "procs_running 1\n"
    "procs_blocked 0\n";

static const char x86_vmstat[] = "nr_free_pages 1044232\n"
				 "nr_free_pages_blocks 999936\n"
				 "nr_zone_inactive_anon 1320\n"
				 "nr_zone_active_anon 382\n"
				 "nr_zone_inactive_file 31313\n"
				 "nr_zone_active_file 26429\n"
				 "nr_zone_unevictable 2680\n"
				 "nr_zone_write_pending 233\n"
				 "nr_mlock 2291\n"
				 "nr_zspages 0\n"
				 "nr_free_cma 0\n"
				 "numa_hit 1384578\n"
				 "numa_miss 0\n"
				 "numa_foreign 0\n"
				 "numa_interleave 1141\n"
				 "numa_local 1384578\n"
				 "numa_other 0\n"
				 "nr_inactive_anon 1323\n"
				 "nr_active_anon 382\n"
				 "nr_inactive_file 31313\n"
				 "nr_active_file 26429\n"
				 "nr_unevictable 2680\n"
				 "nr_slab_reclaimable 13832\n"
				 "nr_slab_unreclaimable 5739\n"
				 "nr_isolated_anon 0\n"
				 "nr_isolated_file 0\n"
				 "workingset_nodes 8595\n"
				 "workingset_refault_anon 0\n"
				 "workingset_refault_file 76485\n"
				 "workingset_activate_anon 0\n"
				 "workingset_activate_file 4921\n"
				 "workingset_restore_anon 0\n"
				 "workingset_restore_file 0\n"
				 "workingset_nodereclaim 0\n"
				 "nr_anon_pages 2123\n"
				 "nr_mapped 2598\n"
				 "nr_file_pages 59980\n"
				 "nr_dirty 233\n"
				 "nr_writeback 0\n"
				 "nr_shmem 2238\n"
				 "nr_shmem_hugepages 0\n"
				 "nr_shmem_pmdmapped 0\n"
				 "nr_file_hugepages 0\n"
				 "nr_file_pmdmapped 0\n"
				 "nr_anon_transparent_hugepages 0\n"
				 "nr_vmscan_write 0\n"
				 "nr_vmscan_immediate_reclaim 405\n"
				 "nr_dirtied 83589\n"
				 "nr_written 59563\n"
				 "nr_throttled_written 0\n"
				 "nr_kernel_misc_reclaimable 0\n"
				 "nr_foll_pin_acquired 0\n"
				 "nr_foll_pin_released 0\n"
				 "nr_kernel_stack 1316\n"
				 "nr_page_table_pages 398\n"
				 "nr_sec_page_table_pages 0\n"
				 "nr_iommu_pages 0\n"
				 "nr_swapcached 0\n"
				 "pgpromote_success 0\n"
				 "pgpromote_candidate 0\n"
				 "pgpromote_candidate_nrl 0\n"
				 "pgdemote_kswapd 0\n"
				 "pgdemote_direct 0\n"
				 "pgdemote_khugepaged 0\n"
				 "pgdemote_proactive 0\n"
				 "nr_hugetlb 0\n"
				 "nr_balloon_pages 0\n"
				 "nr_kernel_file_pages 0\n"
				 "nr_dirty_threshold 1220757\n"
				 "nr_dirty_background_threshold 609633\n"
				 "nr_memmap_pages 0\n"
				 "nr_memmap_boot_pages 98304\n"
				 "pgpgin 1403281\n"
				 "pgpgout 240624\n"
				 "pswpin 0\n"
				 "pswpout 0\n"
				 "pgalloc_dma 0\n"
				 "pgalloc_dma32 0\n"
				 "pgalloc_normal 1494154\n"
				 "pgalloc_movable 0\n"
				 "pgalloc_device 0\n"
				 "allocstall_dma 0\n"
				 "allocstall_dma32 0\n"
				 "allocstall_normal 0\n"
				 "allocstall_movable 0\n"
				 "allocstall_device 0\n"
				 "pgskip_dma 0\n"
				 "pgskip_dma32 0\n"
				 "pgskip_normal 0\n"
				 "pgskip_movable 0\n"
				 "pgskip_device 0\n"
				 "pgfree 2543951\n"
				 "pgactivate 79359\n"
				 "pgdeactivate 0\n"
				 "pglazyfree 23011\n"
				 "pgfault 1443323\n"
				 "pgmajfault 1011\n"
				 "pglazyfreed 0\n"
				 "pgrefill 0\n"
				 "pgreuse 248372\n"
				 "pgsteal_kswapd 0\n"
				 "pgsteal_direct 0\n"
				 "pgsteal_khugepaged 0\n"
				 "pgsteal_proactive 0\n"
				 "pgscan_kswapd 0\n"
				 "pgscan_direct 0\n"
				 "pgscan_khugepaged 0\n"
				 "pgscan_proactive 0\n"
				 "pgscan_direct_throttle 0\n"
				 "pgscan_anon 0\n"
				 "pgscan_file 0\n"
				 "pgsteal_anon 0\n"
				 "pgsteal_file 0\n"
				 "zone_reclaim_success 0\n"
				 "zone_reclaim_failed 0\n"
				 "pginodesteal 0\n"
				 "slabs_scanned 249\n"
				 "kswapd_inodesteal 0\n"
				 "kswapd_low_wmark_hit_quickly 0\n"
				 "kswapd_high_wmark_hit_quickly 0\n"
				 "pageoutrun 0\n"
				 "pgrotated 381\n"
				 "drop_pagecache 1\n"
				 "drop_slab 2\n"
				 "oom_kill 0\n"
				 "numa_pte_updates 0\n"
				 "numa_huge_pte_updates 0\n"
				 "numa_hint_faults 0\n"
				 "numa_hint_faults_local 0\n"
				 "numa_pages_migrated 0\n"
				 "pgmigrate_success 0\n"
				 "pgmigrate_fail 0\n"
				 "thp_migration_success 0\n"
				 "thp_migration_fail 0\n"
				 "thp_migration_split 0\n"
				 "compact_migrate_scanned 0\n"
				 "compact_free_scanned 0\n"
				 "compact_isolated 0\n"
				 "compact_stall 0\n"
				 "compact_fail 0\n"
				 "compact_success 0\n"
				 "compact_daemon_wake 0\n"
				 "compact_daemon_migrate_scanned 0\n"
				 "compact_daemon_free_scanned 0\n"
				 "htlb_buddy_alloc_success 0\n"
				 "htlb_buddy_alloc_fail 0\n"
				 "unevictable_pgs_culled 7539\n"
				 "unevictable_pgs_scanned 0\n"
				 "unevictable_pgs_rescued 4858\n"
				 "unevictable_pgs_mlocked 7301\n"
				 "unevictable_pgs_munlocked 5011\n"
				 "unevictable_pgs_cleared 0\n"
				 "unevictable_pgs_stranded 0\n"
				 "thp_fault_alloc 0\n"
				 "thp_fault_fallback 0\n"
				 "thp_fault_fallback_charge 0\n"
				 "thp_collapse_alloc 0\n"
				 "thp_collapse_alloc_failed 0\n"
				 "thp_file_alloc 0\n"
				 "thp_file_fallback 0\n"
				 "thp_file_fallback_charge 0\n"
				 "thp_file_mapped 0\n"
				 "thp_split_page 0\n"
				 "thp_split_page_failed 0\n"
				 "thp_deferred_split_page 0\n"
				 "thp_underused_split_page 0\n"
				 "thp_split_pmd 0\n"
				 "thp_scan_exceed_none_pte 0\n"
				 "thp_scan_exceed_swap_pte 0\n"
				 "thp_scan_exceed_share_pte 0\n"
				 "thp_split_pud 0\n"
				 "thp_zero_page_alloc 0\n"
				 "thp_zero_page_alloc_failed 0\n"
				 "thp_swpout 0\n"
				 "thp_swpout_fallback 0\n"
				 "balloon_inflate 0\n"
				 "balloon_deflate 0\n"
				 "balloon_migrate 0\n"
				 "swap_ra 0\n"
				 "swap_ra_hit 0\n"
				 "swpin_zero 0\n"
				 "swpout_zero 0\n"
				 "ksm_swpin_copy 0\n"
				 "cow_ksm 0\n"
				 "zswpin 0\n"
				 "zswpout 0\n"
				 "zswpwb 0\n"
				 "direct_map_level2_splits 0\n"
				 "direct_map_level3_splits 0\n"
				 "direct_map_level2_collapses 0\n"
				 "direct_map_level3_collapses 0\n"
				 "nr_unstable 0\n";

/*
 * Excerpt of /proc/vmstat of an Android 4.14 phone: "workingset_refault"
 * before the 5.9 split; no pgsteal_kswapd/_direct (4.14 split those per
 * zone: pgsteal_kswapd_normal ...), no oom_kill on this build.
 */
static const char android414_vmstat[] = "nr_free_pages 35120\n"
					"nr_zone_inactive_anon 95442\n"
					"workingset_refault 2351179\n"
					"workingset_activate 460227\n"
					"pgpgin 44197860\n"
					"pgpgout 3561004\n"
					"pswpin 1304821\n"
					"pswpout 2517043\n"
					"pgfault 389224183\n"
					"pgmajfault 2141509\n"
					"pgsteal_kswapd_normal 9310231\n"
					"pgscan_kswapd 13419987\n"
					"pgscan_direct 412307\n"
					"pgscan_direct_throttle 0\n";

static const char x86_meminfo[] = "MemTotal:       24683656 kB\n"
				  "MemFree:        24312148 kB\n"
				  "MemAvailable:   24364176 kB\n"
				  "Buffers:            4192 kB\n"
				  "Cached:           235728 kB\n"
				  "SwapCached:            0 kB\n"
				  "Active:           107244 kB\n"
				  "Inactive:         130444 kB\n"
				  "Active(anon):       1528 kB\n"
				  "Inactive(anon):     5192 kB\n"
				  "Active(file):     105716 kB\n"
				  "Inactive(file):   125252 kB\n"
				  "Unevictable:       10720 kB\n"
				  "Mlocked:            9164 kB\n"
				  "SwapTotal:             0 kB\n"
				  "SwapFree:              0 kB\n"
				  "Zswap:                 0 kB\n"
				  "Zswapped:              0 kB\n"
				  "Dirty:               932 kB\n"
				  "Writeback:             0 kB\n"
				  "AnonPages:          8592 kB\n"
				  "Mapped:            10392 kB\n"
				  "Shmem:              8952 kB\n"
				  "KReclaimable:      55328 kB\n"
				  "Slab:              78284 kB\n"
				  "SReclaimable:      55328 kB\n"
				  "SUnreclaim:        22956 kB\n"
				  "KernelStack:        1316 kB\n"
				  "PageTables:         1592 kB\n"
				  "SecPageTables:         0 kB\n"
				  "NFS_Unstable:          0 kB\n"
				  "Bounce:                0 kB\n"
				  "WritebackTmp:          0 kB\n"
				  "CommitLimit:    12341828 kB\n"
				  "Committed_AS:      48908 kB\n"
				  "VmallocTotal:   34359738367 kB\n"
				  "VmallocUsed:        5556 kB\n"
				  "VmallocChunk:          0 kB\n"
				  "Percpu:              688 kB\n"
				  "AnonHugePages:         0 kB\n"
				  "ShmemHugePages:        0 kB\n"
				  "ShmemPmdMapped:        0 kB\n"
				  "FileHugePages:         0 kB\n"
				  "FilePmdMapped:         0 kB\n"
				  "Balloon:               0 kB\n"
				  "HugePages_Total:       0\n"
				  "HugePages_Free:        0\n"
				  "HugePages_Rsvd:        0\n"
				  "HugePages_Surp:        0\n"
				  "Hugepagesize:       2048 kB\n"
				  "Hugetlb:               0 kB\n"
				  "DirectMap4k:       20480 kB\n"
				  "DirectMap2M:     2076672 kB\n"
				  "DirectMap1G:    25165824 kB\n";

/* Android 3.10 kernel: before MemAvailable (3.14); Active: line missing. */
static const char old_meminfo[] = "MemTotal:        1899564 kB\n"
				  "MemFree:          109012 kB\n"
				  "Buffers:           14732 kB\n"
				  "Cached:           406756 kB\n"
				  "SwapCached:        10444 kB\n"
				  "Active(anon):     447936 kB\n"
				  "Inactive(anon):   160588 kB\n"
				  "Active(file):     201440 kB\n"
				  "Inactive(file):   198932 kB\n"
				  "Inactive:         359520 kB\n"
				  "HugePages_Total:       0\n";

static const char psi_cpu[] =
    "some avg10=84.67 avg60=42.42 avg300=13.71 total=50507705\n"
    "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
static const char psi_io[] =
    "some avg10=0.01 avg60=0.07 avg300=0.37 total=4251166\n"
    "full avg10=0.00 avg60=0.03 avg300=0.34 total=3977782\n";
/* cpu pressure before 5.13 had no "full" line. */
static const char psi_cpu_old[] =
    "some avg10=0.02 avg60=1.35 avg300=0.76 total=3304596\n";
static const char loadavg_txt[] = "0.27 0.13 0.05 1/77 2234\n";

/* --------------------------------------------------------------- feeding */

typedef int (*parse_fn)(const char *, size_t, void *);

/* Parse a private copy of exactly len bytes: ASan sees any over-read. */
static int
feed(parse_fn fn, const char *text, size_t len, void *ret)
{
	char *b = malloc(len);
	int r;

	ck_assert(b != NULL || len == 0);
	if (len > 0)
		memcpy(b, text, len);
	r = fn(b, len, ret);
	free(b);
	return r;
}

static int
w_procstat(const char *b, size_t n, void *r)
{
	return procstat_parse(b, n, r);
}

static int
w_loadavg(const char *b, size_t n, void *r)
{
	return loadavg_parse(b, n, r);
}

static int
w_psi(const char *b, size_t n, void *r)
{
	return psi_parse(b, n, r);
}

static int
w_vmstat(const char *b, size_t n, void *r)
{
	return vmstat_parse(b, n, r);
}

static int
w_meminfo(const char *b, size_t n, void *r)
{
	return meminfo_parse(b, n, r);
}

static int
w_u64(const char *b, size_t n, void *r)
{
	return parse_u64_text(b, n, r);
}

static const struct {
	const char *name;
	parse_fn fn;
	size_t size;
} parsers[] = {
	{ "procstat", w_procstat, sizeof(struct procstat) },
	{ "loadavg", w_loadavg, sizeof(struct loadavg) },
	{ "psi", w_psi, sizeof(struct psi) },
	{ "vmstat", w_vmstat, sizeof(struct vmstat) },
	{ "meminfo", w_meminfo, sizeof(struct meminfo) },
	{ "u64", w_u64, sizeof(uint64_t) },
};
#define NPARSERS (sizeof(parsers) / sizeof(parsers[0]))

static const struct {
	const char *name;
	const char *text;
} fixtures[] = {
	{ "x86_stat", x86_stat },
	{ "android_stat", android_stat },
	{ "android_stat_later", android_stat_later },
	{ "old24_stat", old24_stat },
	{ "k2611_stat", k2611_stat },
	{ "x86_vmstat", x86_vmstat },
	{ "android414_vmstat", android414_vmstat },
	{ "x86_meminfo", x86_meminfo },
	{ "old_meminfo", old_meminfo },
	{ "psi_cpu", psi_cpu },
	{ "psi_io", psi_io },
	{ "psi_cpu_old", psi_cpu_old },
	{ "loadavg", loadavg_txt },
	{ "u64", "1804800\n" },
};
#define NFIXTURES (sizeof(fixtures) / sizeof(fixtures[0]))

/* 41 KB: too big for a test's stack frame next to a second one. */
static struct procstat st, st2;

#define STAT(text) feed(w_procstat, (text), strlen(text), &st)
#define LOADAVG(text, la) feed(w_loadavg, (text), strlen(text), (la))
#define PSI(text, p) feed(w_psi, (text), strlen(text), (p))
#define VMSTAT(text, vm) feed(w_vmstat, (text), strlen(text), (vm))
#define MEMINFO(text, mi) feed(w_meminfo, (text), strlen(text), (mi))
#define U64(text, v) feed(w_u64, (text), strlen(text), (v))

static void
assert_times(const struct cpu_times *t, uint64_t user, uint64_t nice,
    uint64_t system, uint64_t idle, uint64_t iowait, uint64_t irq,
    uint64_t softirq, uint64_t steal, uint64_t guest, uint64_t guest_nice)
{
	ck_assert_uint_eq(t->user, user);
	ck_assert_uint_eq(t->nice, nice);
	ck_assert_uint_eq(t->system, system);
	ck_assert_uint_eq(t->idle, idle);
	ck_assert_uint_eq(t->iowait, iowait);
	ck_assert_uint_eq(t->irq, irq);
	ck_assert_uint_eq(t->softirq, softirq);
	ck_assert_uint_eq(t->steal, steal);
	ck_assert_uint_eq(t->guest, guest);
	ck_assert_uint_eq(t->guest_nice, guest_nice);
}

/* A failed parse must leave *ret as it was: fill, parse, compare. */
static void
assert_fails_untouched(parse_fn fn, const char *text, size_t len, size_t size,
    int want)
{
	unsigned char *ret = malloc(size), *ref = malloc(size);
	int r;

	ck_assert(ret != NULL && ref != NULL);
	memset(ret, 0xa5, size);
	memset(ref, 0xa5, size);
	r = feed(fn, text, len, ret);
	ck_assert_int_eq(r, want);
	ck_assert(memcmp(ret, ref, size) == 0);
	free(ret);
	free(ref);
}

#define STAT_FAILS(text, want)                                   \
	assert_fails_untouched(w_procstat, (text), strlen(text), \
	    sizeof(struct procstat), (want))
#define LOADAVG_FAILS(text, want)                               \
	assert_fails_untouched(w_loadavg, (text), strlen(text), \
	    sizeof(struct loadavg), (want))
#define PSI_FAILS(text, want)                               \
	assert_fails_untouched(w_psi, (text), strlen(text), \
	    sizeof(struct psi), (want))
#define VMSTAT_FAILS(text, want)                               \
	assert_fails_untouched(w_vmstat, (text), strlen(text), \
	    sizeof(struct vmstat), (want))
#define MEMINFO_FAILS(text, want)                               \
	assert_fails_untouched(w_meminfo, (text), strlen(text), \
	    sizeof(struct meminfo), (want))
#define U64_FAILS(text, want)                                                 \
	assert_fails_untouched(w_u64, (text), strlen(text), sizeof(uint64_t), \
	    (want))

/* ------------------------------------------------------------ /proc/stat */

START_TEST(test_stat_x86_6x)
{
	unsigned i;

	ck_assert_int_eq(STAT(x86_stat), 0);
	assert_times(&st.all, 7381, 0, 2613, 68327, 457, 0, 141, 238, 0, 0);
	assert_times(&st.cpu[0], 3100, 0, 1023, 35286, 25, 0, 40, 101, 0, 0);
	assert_times(&st.cpu[1], 4281, 0, 1590, 33040, 432, 0, 101, 136, 0, 0);
	ck_assert_uint_eq(st.online[0], 1);
	ck_assert_uint_eq(st.online[1], 1);
	for (i = 2; i < VITALS_CPU_MAX; i++)
		ck_assert_uint_eq(st.online[i], 0);
	ck_assert_uint_eq(st.ncpu_online, 2);
	ck_assert_uint_eq(st.cpu_span, 2);
	ck_assert_uint_eq(st.cpu_dropped, 0);
	ck_assert_uint_eq(st.ctxt, 288705);
	ck_assert_uint_eq(st.btime, 1796012283);
	ck_assert_uint_eq(st.processes, 7635);
	ck_assert_uint_eq(st.procs_running, 2);
	ck_assert_uint_eq(st.procs_blocked, 0);
	ck_assert_uint_eq(st.have,
	    PROCSTAT_HAVE_CTXT | PROCSTAT_HAVE_BTIME | PROCSTAT_HAVE_PROCESSES |
		PROCSTAT_HAVE_RUNNING | PROCSTAT_HAVE_BLOCKED);
}
END_TEST

START_TEST(test_stat_android_offline)
{
	ck_assert_int_eq(STAT(android_stat), 0);
	/* the aggregate still holds offline cpu5's frozen counters */
	assert_times(&st.all, 1526351, 260613, 1085243, 31450642, 21831, 158730,
	    52776, 0, 0, 0);
	assert_times(&st.cpu[0], 270218, 52170, 265231, 3507117, 4952, 57612,
	    28437, 0, 0, 0);
	assert_times(&st.cpu[7], 89913, 12545, 29587, 4302601, 671, 3590, 584,
	    0, 0, 0);
	assert_times(&st.cpu[5], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	ck_assert_uint_eq(st.online[4], 1);
	ck_assert_uint_eq(st.online[5], 0);
	ck_assert_uint_eq(st.online[6], 1);
	ck_assert_uint_eq(st.online[8], 0);
	ck_assert_uint_eq(st.ncpu_online, 7);
	ck_assert_uint_eq(st.cpu_span, 8);
	ck_assert_uint_eq(st.cpu_dropped, 0);
	ck_assert_uint_eq(st.ctxt, 1990473181);
	ck_assert_uint_eq(st.btime, 1717999123);
	ck_assert_uint_eq(st.processes, 2915044);
	ck_assert_uint_eq(st.procs_running, 3);
	ck_assert_uint_eq(st.procs_blocked, 1);
	ck_assert_uint_eq(st.have, 0x1f);
}
END_TEST

START_TEST(test_stat_hotplug_pair)
{
	ck_assert_int_eq(feed(w_procstat, android_stat, strlen(android_stat),
			     &st),
	    0);
	ck_assert_int_eq(feed(w_procstat, android_stat_later,
			     strlen(android_stat_later), &st2),
	    0);
	/* cpu5 came back, cpu7 went: both deltas are invalid for metrics */
	ck_assert_uint_eq(st.online[5], 0);
	ck_assert_uint_eq(st2.online[5], 1);
	ck_assert_uint_eq(st.online[7], 1);
	ck_assert_uint_eq(st2.online[7], 0);
	assert_times(&st2.cpu[5], 121033, 13602, 41607, 4202154, 1500, 6112,
	    1503, 0, 0, 0);
	assert_times(&st2.cpu[7], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	assert_times(&st2.all, 1529951, 264213, 1088843, 31454242, 25431,
	    162330, 56376, 0, 0, 0);
	ck_assert_uint_eq(st2.ncpu_online, 7);
	ck_assert_uint_eq(st2.cpu_span, 7);
	ck_assert_uint_eq(st2.ctxt, 1990500000);
	ck_assert_uint_eq(st2.procs_running, 1);
	ck_assert_uint_eq(st2.procs_blocked, 0);
}
END_TEST

START_TEST(test_stat_old_kernel_4cols)
{
	ck_assert_int_eq(STAT(old24_stat), 0);
	/* iowait..guest_nice do not exist on 2.4: they read as 0 */
	assert_times(&st.all, 1279636934, 73759586, 192327563, 12184330186ULL,
	    0, 0, 0, 0, 0, 0);
	assert_times(&st.cpu[1], 317625498, 12339880, 48227479, 2999046968ULL,
	    0, 0, 0, 0, 0, 0);
	ck_assert_uint_eq(st.ncpu_online, 2);
	ck_assert_uint_eq(st.cpu_span, 2);
	ck_assert_uint_eq(st.ctxt, 1990473);
	ck_assert_uint_eq(st.btime, 1062191376);
	ck_assert_uint_eq(st.processes, 2915);
	ck_assert_uint_eq(st.procs_running, 0);
	ck_assert_uint_eq(st.have,
	    PROCSTAT_HAVE_CTXT | PROCSTAT_HAVE_BTIME | PROCSTAT_HAVE_PROCESSES);
}
END_TEST

START_TEST(test_stat_8cols_and_extra_cols)
{
	ck_assert_int_eq(STAT(k2611_stat), 0);
	assert_times(&st.all, 2255, 34, 2290, 22625563, 6290, 127, 456, 17, 0,
	    0);
	assert_times(&st.cpu[1], 1123, 0, 849, 11313845, 2614, 0, 18, 8, 0, 0);
	ck_assert_uint_eq(st.have, 0x1f);

	/* a future kernel appending columns: known prefix kept */
	ck_assert_int_eq(STAT("cpu  1 2 3 4 5 6 7 8 9 10 11 12\n"
			      "cpu0 1 2 3 4 5 6 7 8 9 10 11\n"),
	    0);
	assert_times(&st.all, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
	assert_times(&st.cpu[0], 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
	/* ... but a non-number among them is still garbage */
	STAT_FAILS("cpu  1 2 3 4 5 6 7 8 9 10 x\n", -EINVAL);
}
END_TEST

START_TEST(test_stat_minimal_and_layout)
{
	/* only the aggregate: valid, no CPU kept, no scalar */
	ck_assert_int_eq(STAT("cpu  1 2 3 4"), 0);
	assert_times(&st.all, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0);
	ck_assert_uint_eq(st.ncpu_online, 0);
	ck_assert_uint_eq(st.cpu_span, 0);
	ck_assert_uint_eq(st.have, 0);
	/* tabs, runs of blanks, blank lines, cpu lines after the scalars */
	ck_assert_int_eq(STAT("\n ctxt\t7 \n\ncpu3  9 8 7 6\n"
			      "cpu\t1  2 3 4\n  \n"),
	    0);
	ck_assert_uint_eq(st.ctxt, 7);
	ck_assert_uint_eq(st.have, PROCSTAT_HAVE_CTXT);
	assert_times(&st.cpu[3], 9, 8, 7, 6, 0, 0, 0, 0, 0, 0);
	ck_assert_uint_eq(st.online[3], 1);
	ck_assert_uint_eq(st.ncpu_online, 1);
	ck_assert_uint_eq(st.cpu_span, 4);
	/* the largest value uint64_t holds */
	ck_assert_int_eq(STAT("cpu  18446744073709551615 0 0 0\n"
			      "btime 18446744073709551615\n"),
	    0);
	ck_assert_uint_eq(st.all.user, UINT64_MAX);
	ck_assert_uint_eq(st.btime, UINT64_MAX);
}
END_TEST

START_TEST(test_stat_missing_aggregate_and_empty)
{
	const char *no_agg = strstr(x86_stat, "cpu0");

	STAT_FAILS(no_agg, -EINVAL);
	STAT_FAILS("", -EINVAL);
	STAT_FAILS("\n\n", -EINVAL);
	STAT_FAILS("ctxt 5\nbtime 6\n", -EINVAL);
	assert_fails_untouched(w_procstat, NULL, 0, sizeof(st), -EINVAL);
	ck_assert_int_eq(procstat_parse(NULL, 0, &st), -EINVAL);
}
END_TEST

START_TEST(test_stat_garbage)
{
	STAT_FAILS("cpu  1 2 3\n", -EINVAL); /* fewer than 4 numbers */
	STAT_FAILS("cpu\n", -EINVAL);
	STAT_FAILS("cpu  1 2 x 4\n", -EINVAL);
	STAT_FAILS("cpu  1 2 3 4\ncpu0 1 2 3 4x\n", -EINVAL);
	STAT_FAILS("cpu  1 2 3 4\ncpu0 1 -2 3 4\n", -EINVAL);
	STAT_FAILS("cpu  1 2 3 4\ncpu0 1 +2 3 4\n", -EINVAL);
	STAT_FAILS("cpu  1 2 3 4\ncpux 1 2 3 4\n", -EINVAL);
	STAT_FAILS("cpu  1 2 3 4\ncpu-1 1 2 3 4\n", -EINVAL);
	STAT_FAILS("cpu  1 2 3 4\ncpufreq 1 2 3 4\n", -EINVAL);
	STAT_FAILS("cpu  1 2 3 4\r\n", -EINVAL); /* CRLF is not procfs */
	STAT_FAILS("cpu  1 2 3 4\nctxt\n", -EINVAL);
	STAT_FAILS("cpu  1 2 3 4\nctxt 12a\n", -EINVAL);
	STAT_FAILS("cpu  1 2 3 4\nctxt 1 2\n", -EINVAL);
	STAT_FAILS("cpu  1 2 3 4\nprocs_running -1\n", -EINVAL);
	STAT_FAILS("cpu  1 2 3 4\nbtime 1.5\n", -EINVAL);
	STAT_FAILS(x86_stat + 1, -EINVAL); /* "pu  7381 ..." then cpu0.. */
	/* a NUL inside a line is garbage, not an end of string */
	assert_fails_untouched(w_procstat, "cpu  1 2\0 3 4\n", 14, sizeof(st),
	    -EINVAL);
	/* lines that are not ours are skipped unread, garbage or not */
	ck_assert_int_eq(STAT("cpu  1 2 3 4\nintr 1 x -3 \r\nswap ?\n"), 0);
	ck_assert_int_eq(STAT("cpu  1 2 3 4\nctxt_switches x\nctx 1\n"), 0);
	ck_assert_uint_eq(st.have, 0);
}
END_TEST

START_TEST(test_stat_overflow)
{
	STAT_FAILS("cpu  18446744073709551616 0 0 0\n", -ERANGE);
	STAT_FAILS("cpu  1 2 3 99999999999999999999\n", -ERANGE);
	STAT_FAILS("cpu  1 2 3 4\ncpu0 1 2 3 4 5 6 7 8 9 18446744073709551620"
		   "\n",
	    -ERANGE);
	STAT_FAILS("cpu  1 2 3 4\nctxt 18446744073709551616\n", -ERANGE);
	/* appended columns overflow too: checked, not silently dropped */
	STAT_FAILS("cpu  1 2 3 4 5 6 7 8 9 10 18446744073709551616\n", -ERANGE);
	/* a cpu number that overflows is not a CPU index */
	STAT_FAILS("cpu  1 2 3 4\ncpu18446744073709551616 1 2 3 4\n", -ERANGE);
}
END_TEST

START_TEST(test_stat_duplicates)
{
	STAT_FAILS("cpu  1 2 3 4\ncpu0 1 2 3 4\ncpu1 1 2 3 4\ncpu0 1 2 3 4\n",
	    -EINVAL);
	STAT_FAILS("cpu  1 2 3 4\ncpu  1 2 3 4\n", -EINVAL);
	STAT_FAILS("cpu  1 2 3 4\nctxt 1\nctxt 1\n", -EINVAL);
	STAT_FAILS("cpu  1 2 3 4\nprocs_blocked 0\nprocs_blocked 0\n", -EINVAL);
	/* "cpu01" is cpu1 written oddly: still a duplicate */
	STAT_FAILS("cpu  1 2 3 4\ncpu1 1 2 3 4\ncpu01 1 2 3 4\n", -EINVAL);
	/* the whole x86 text twice */
	{
		size_t n = strlen(x86_stat);
		char *two = malloc(2 * n + 1);

		memcpy(two, x86_stat, n);
		memcpy(two + n, x86_stat, n + 1);
		STAT_FAILS(two, -EINVAL);
		free(two);
	}
}
END_TEST

START_TEST(test_stat_cpu_max)
{
	ck_assert_int_eq(STAT("cpu  1 2 3 4\ncpu0 1 1 1 1\ncpu511 5 5 5 5\n"
			      "cpu512 6 6 6 6\ncpu4096 7 7 7 7\n"
			      "cpu512 8 8 8 8\n"),
	    0);
	ck_assert_uint_eq(st.online[511], 1);
	assert_times(&st.cpu[511], 5, 5, 5, 5, 0, 0, 0, 0, 0, 0);
	ck_assert_uint_eq(st.ncpu_online, 2);
	ck_assert_uint_eq(st.cpu_span, VITALS_CPU_MAX);
	/* counted, not kept; duplicates among them cannot be told */
	ck_assert_uint_eq(st.cpu_dropped, 3);
	/* dropped lines are still checked */
	STAT_FAILS("cpu  1 2 3 4\ncpu600 1 2 3\n", -EINVAL);
}
END_TEST

START_TEST(test_stat_not_nul_terminated)
{
	/* len stops before "5": reading on would make idle 45 */
	const char text[] = "cpu  1 2 3 45";

	ck_assert_int_eq(feed(w_procstat, text, sizeof(text) - 2, &st), 0);
	ck_assert_uint_eq(st.all.idle, 4);
	/* and before "4": the aggregate has three numbers only */
	assert_fails_untouched(w_procstat, text, sizeof(text) - 3, sizeof(st),
	    -EINVAL);
}
END_TEST

START_TEST(test_stat_truncated)
{
	const char *t = android_stat;
	size_t n = strlen(t), cut, agg_end = (size_t)(strchr(t, '\n') - t);
	size_t idle_at = (size_t)(strstr(t, " 31450642") - t) + 1;
	int r;

	for (cut = 0; cut <= n; cut++) {
		r = feed(w_procstat, t, cut, &st);
		if (cut <= idle_at) {
			/* fewer than 4 numbers in the aggregate */
			ck_assert_int_eq(r, -EINVAL);
		} else if (cut == n || t[cut] == '\n' || t[cut - 1] == '\n') {
			/* whole lines only */
			ck_assert_msg(r == 0, "cut %zu: %d", cut, r);
		} else {
			/* in a line: "cpu1 12" is short, "ctxt 19" is not */
			ck_assert_msg(r == 0 || r == -EINVAL, "cut %zu: %d",
			    cut, r);
		}
		if (r == 0 && cut > agg_end)
			ck_assert_uint_eq(st.all.idle, 31450642);
	}
	/* cut right after the aggregate line: nothing else known */
	ck_assert_int_eq(feed(w_procstat, t, agg_end + 1, &st), 0);
	ck_assert_uint_eq(st.ncpu_online, 0);
	ck_assert_uint_eq(st.have, 0);
	/* cut inside "ctxt": the line is unknown, so skipped */
	ck_assert_int_eq(feed(w_procstat, t,
			     (size_t)(strstr(t, "ctxt") - t) + 3, &st),
	    0);
	ck_assert_uint_eq(st.ncpu_online, 7);
	ck_assert_uint_eq(st.have, 0);
	/* cut after "ctxt ": no number */
	assert_fails_untouched(w_procstat, t,
	    (size_t)(strstr(t, "ctxt") - t) + 5, sizeof(st), -EINVAL);
	/* cut inside "cpu7 89913 12545": a short cpu line */
	assert_fails_untouched(w_procstat, t,
	    (size_t)(strstr(t, "cpu7") - t) + 16, sizeof(st), -EINVAL);
}
END_TEST

START_TEST(test_stat_long_intr)
{
	/* a 64 KB intr line between the cpu lines and ctxt */
	size_t n = 0, cap = 1 << 17;
	char *b = malloc(cap);
	int i;

	n += (size_t)sprintf(b + n, "cpu  10 0 20 30\ncpu0 10 0 20 30\nintr");
	for (i = 0; n < 65536 + 40; i++)
		n += (size_t)sprintf(b + n, " %d", i % 7 ? 0 : i);
	n += (size_t)sprintf(b + n, "\nctxt 99\nsoftirq");
	for (i = 0; i < 2000; i++)
		n += (size_t)sprintf(b + n, " %d", i);
	n += (size_t)sprintf(b + n, "\nprocs_blocked 4\n");
	ck_assert_uint_lt(n, cap);
	ck_assert_int_eq(feed(w_procstat, b, n, &st), 0);
	ck_assert_uint_eq(st.ctxt, 99);
	ck_assert_uint_eq(st.procs_blocked, 4);
	ck_assert_uint_eq(st.have, PROCSTAT_HAVE_CTXT | PROCSTAT_HAVE_BLOCKED);
	assert_times(&st.cpu[0], 10, 0, 20, 30, 0, 0, 0, 0, 0, 0);
	free(b);
}
END_TEST

/* --------------------------------------------------------- /proc/loadavg */

START_TEST(test_loadavg_real)
{
	struct loadavg la;

	ck_assert_int_eq(LOADAVG(loadavg_txt, &la), 0);
	/* exact: the fixed-point parse rounds like the literal */
	ck_assert_double_eq(la.avg1, 0.27);
	ck_assert_double_eq(la.avg5, 0.13);
	ck_assert_double_eq(la.avg15, 0.05);
	ck_assert_uint_eq(la.runnable, 1);
	ck_assert_uint_eq(la.threads, 77);
	ck_assert_uint_eq(la.last_pid, 2234);

	ck_assert_int_eq(LOADAVG("54.51 15.69 5.51 1/81 10059", &la), 0);
	ck_assert_double_eq(la.avg1, 54.51);
	ck_assert_double_eq(la.avg5, 15.69);
	ck_assert_double_eq(la.avg15, 5.51);
	ck_assert_uint_eq(la.runnable, 1);
	ck_assert_uint_eq(la.threads, 81);
	ck_assert_uint_eq(la.last_pid, 10059);

	ck_assert_int_eq(LOADAVG("1024.00 7 0.5 4294967295/4294967295 "
				 "4294967295\n",
			     &la),
	    0);
	ck_assert_double_eq(la.avg1, 1024.0);
	ck_assert_double_eq(la.avg5, 7.0);
	ck_assert_double_eq(la.avg15, 0.5);
	ck_assert_uint_eq(la.runnable, UINT32_MAX);
	ck_assert_uint_eq(la.threads, UINT32_MAX);
	ck_assert_uint_eq(la.last_pid, UINT32_MAX);
}
END_TEST

START_TEST(test_loadavg_locale)
{
	static const char *const comma[] = { "de_DE.UTF-8", "de_DE.utf8",
		"fr_FR.UTF-8", "ru_RU.UTF-8" };
	struct loadavg la;
	size_t i;

	/* where a comma locale exists, '.' must still be the separator */
	for (i = 0; i < sizeof(comma) / sizeof(comma[0]); i++)
		if (setlocale(LC_NUMERIC, comma[i]) != NULL)
			break;
	ck_assert_int_eq(LOADAVG(loadavg_txt, &la), 0);
	ck_assert_double_eq(la.avg1, 0.27);
	LOADAVG_FAILS("0,27 0,13 0,05 1/77 2234\n", -EINVAL);
	setlocale(LC_NUMERIC, "C");
}
END_TEST

START_TEST(test_loadavg_garbage)
{
	LOADAVG_FAILS("", -EINVAL);
	LOADAVG_FAILS("\n", -EINVAL);
	LOADAVG_FAILS("0.27 0.13 0.05 1/77\n", -EINVAL);
	LOADAVG_FAILS("0.27 0.13 0.05 1/77 2234 9\n", -EINVAL);
	LOADAVG_FAILS("0.27 0.13 0.05 177 2234\n", -EINVAL);
	LOADAVG_FAILS("0.27 0.13 0.05 1/77/3 2234\n", -EINVAL);
	LOADAVG_FAILS("0.27 0.13 0.05 /77 2234\n", -EINVAL);
	LOADAVG_FAILS("0.27 0.13 0.05 1/ 2234\n", -EINVAL);
	LOADAVG_FAILS(".27 0.13 0.05 1/77 2234\n", -EINVAL);
	LOADAVG_FAILS("0. 0.13 0.05 1/77 2234\n", -EINVAL);
	LOADAVG_FAILS("0.2.7 0.13 0.05 1/77 2234\n", -EINVAL);
	LOADAVG_FAILS("-0.27 0.13 0.05 1/77 2234\n", -EINVAL);
	LOADAVG_FAILS("0.27 0.13 1e2 1/77 2234\n", -EINVAL);
	LOADAVG_FAILS("0.27 0.13 0.05 1/77 -1\n", -EINVAL);
	LOADAVG_FAILS("0.27 0.13 0.05 1/77 2234\n\n", -EINVAL);
	LOADAVG_FAILS("0.27 0.13 0.05 1/77 2234\n0.27 0.13 0.05 1/77 2234\n",
	    -EINVAL);
	LOADAVG_FAILS("0.27 0.13 0.05 1/77 2234\r\n", -EINVAL);
	LOADAVG_FAILS("0.27 0.13 0.05 4294967296/77 2234\n", -ERANGE);
	LOADAVG_FAILS("0.27 0.13 0.05 1/4294967296 2234\n", -ERANGE);
	LOADAVG_FAILS("0.27 0.13 0.05 1/77 4294967296\n", -ERANGE);
	LOADAVG_FAILS("18446744073709551616.00 0.13 0.05 1/77 2234\n", -ERANGE);
	/* not NUL-terminated: the pid ends at len, not at "99" */
	{
		struct loadavg la;
		const char t[] = "0.27 0.13 0.05 1/77 2234";

		ck_assert_int_eq(feed(w_loadavg, t, sizeof(t) - 3, &la), 0);
		ck_assert_uint_eq(la.last_pid, 22);
	}
}
END_TEST

/* ---------------------------------------------------------------- PSI */

START_TEST(test_psi_real)
{
	struct psi p;

	ck_assert_int_eq(PSI(psi_cpu, &p), 0);
	ck_assert_double_eq(p.some.avg10, 84.67);
	ck_assert_double_eq(p.some.avg60, 42.42);
	ck_assert_double_eq(p.some.avg300, 13.71);
	ck_assert_uint_eq(p.some.total_us, 50507705);
	ck_assert(p.have_full);
	ck_assert_double_eq(p.full.avg10, 0.0);
	ck_assert_double_eq(p.full.avg300, 0.0);
	ck_assert_uint_eq(p.full.total_us, 0);

	ck_assert_int_eq(PSI(psi_io, &p), 0);
	ck_assert_double_eq(p.some.avg10, 0.01);
	ck_assert_double_eq(p.some.avg60, 0.07);
	ck_assert_double_eq(p.some.avg300, 0.37);
	ck_assert_uint_eq(p.some.total_us, 4251166);
	ck_assert(p.have_full);
	ck_assert_double_eq(p.full.avg10, 0.0);
	ck_assert_double_eq(p.full.avg60, 0.03);
	ck_assert_double_eq(p.full.avg300, 0.34);
	ck_assert_uint_eq(p.full.total_us, 3977782);

	ck_assert_int_eq(PSI("some avg10=100.00 avg60=99.99 avg300=1.5 "
			     "total=18446744073709551615",
			     &p),
	    0);
	ck_assert_double_eq(p.some.avg10, 100.0);
	ck_assert_double_eq(p.some.avg60, 99.99);
	ck_assert_double_eq(p.some.avg300, 1.5);
	ck_assert_uint_eq(p.some.total_us, UINT64_MAX);
	ck_assert(!p.have_full);
}
END_TEST

START_TEST(test_psi_without_full)
{
	struct psi p;

	memset(&p, 0xa5, sizeof(p));
	ck_assert_int_eq(PSI(psi_cpu_old, &p), 0);
	ck_assert_double_eq(p.some.avg10, 0.02);
	ck_assert_double_eq(p.some.avg60, 1.35);
	ck_assert_double_eq(p.some.avg300, 0.76);
	ck_assert_uint_eq(p.some.total_us, 3304596);
	ck_assert(!p.have_full);
	/* no stale bytes from before in the absent line */
	ck_assert_double_eq(p.full.avg10, 0.0);
	ck_assert_uint_eq(p.full.total_us, 0);
}
END_TEST

START_TEST(test_psi_garbage)
{
	PSI_FAILS("", -EINVAL);
	PSI_FAILS("\n", -EINVAL);
	PSI_FAILS("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", -EINVAL);
	PSI_FAILS("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
		  "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
	    -EINVAL);
	PSI_FAILS("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
		  "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
		  "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
	    -EINVAL);
	PSI_FAILS("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
		  "half avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
	    -EINVAL);
	PSI_FAILS("some avg60=0.00 avg10=0.00 avg300=0.00 total=0\n", -EINVAL);
	PSI_FAILS("some avg10=abc avg60=0.00 avg300=0.00 total=0\n", -EINVAL);
	PSI_FAILS("some avg10= avg60=0.00 avg300=0.00 total=0\n", -EINVAL);
	PSI_FAILS("some avg10 =0.00 avg60=0.00 avg300=0.00 total=0\n", -EINVAL);
	PSI_FAILS("some avg10=0,00 avg60=0.00 avg300=0.00 total=0\n", -EINVAL);
	PSI_FAILS("some avg10=0.00 avg60=0.00 avg300=0.00\n", -EINVAL);
	PSI_FAILS("some avg10=0.00 avg60=0.00 avg300=0.00 total=\n", -EINVAL);
	PSI_FAILS("some avg10=0.00 avg60=0.00 avg300=0.00 total=1.5\n",
	    -EINVAL);
	PSI_FAILS("some avg10=0.00 avg60=0.00 avg300=0.00 total=0 x=1\n",
	    -EINVAL);
	PSI_FAILS("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
		  "full avg10=0.00\n",
	    -EINVAL);
	PSI_FAILS("some avg10=0.00 avg60=0.00 avg300=0.00 "
		  "total=18446744073709551616\n",
	    -ERANGE);
	PSI_FAILS("some\n", -EINVAL);
	/* a cut in the middle of "total=" on the full line */
	{
		struct psi p;
		size_t cut = (size_t)(strrchr(psi_io, '=') - psi_io);

		ck_assert_int_eq(feed(w_psi, psi_io, cut + 3, &p), 0);
		ck_assert_uint_eq(p.full.total_us, 39);
		assert_fails_untouched(w_psi, psi_io, cut + 1, sizeof(p),
		    -EINVAL);
	}
}
END_TEST

/* ------------------------------------------------------------ /proc/vmstat */

START_TEST(test_vmstat_x86_6x)
{
	struct vmstat vm;

	ck_assert_int_eq(VMSTAT(x86_vmstat, &vm), 0);
	ck_assert_uint_eq(vm.have, (1u << VM__MAX) - 1);
	ck_assert_uint_eq(vm.v[VM_PGFAULT], 1443323);
	ck_assert_uint_eq(vm.v[VM_PGMAJFAULT], 1011);
	ck_assert_uint_eq(vm.v[VM_PGPGIN], 1403281);
	ck_assert_uint_eq(vm.v[VM_PGPGOUT], 240624);
	ck_assert_uint_eq(vm.v[VM_PSWPIN], 0);
	ck_assert_uint_eq(vm.v[VM_PSWPOUT], 0);
	ck_assert_uint_eq(vm.v[VM_PGSCAN_KSWAPD], 0);
	ck_assert_uint_eq(vm.v[VM_PGSCAN_DIRECT], 0);
	ck_assert_uint_eq(vm.v[VM_PGSTEAL_KSWAPD], 0);
	ck_assert_uint_eq(vm.v[VM_PGSTEAL_DIRECT], 0);
	ck_assert_uint_eq(vm.v[VM_WORKINGSET_REFAULT_ANON], 0);
	ck_assert_uint_eq(vm.v[VM_WORKINGSET_REFAULT_FILE], 76485);
	ck_assert_uint_eq(vm.v[VM_OOM_KILL], 0);
}
END_TEST

START_TEST(test_vmstat_android_old_names)
{
	struct vmstat vm;
	uint32_t want;

	ck_assert_int_eq(VMSTAT(android414_vmstat, &vm), 0);
	want = (1u << VM_PGFAULT) | (1u << VM_PGMAJFAULT) | (1u << VM_PSWPIN) |
	    (1u << VM_PSWPOUT) | (1u << VM_PGPGIN) | (1u << VM_PGPGOUT) |
	    (1u << VM_PGSCAN_KSWAPD) | (1u << VM_PGSCAN_DIRECT) |
	    (1u << VM_WORKINGSET_REFAULT_FILE);
	ck_assert_uint_eq(vm.have, want);
	ck_assert_uint_eq(vm.v[VM_WORKINGSET_REFAULT_FILE], 2351179);
	ck_assert_uint_eq(vm.v[VM_PGFAULT], 389224183);
	ck_assert_uint_eq(vm.v[VM_PGMAJFAULT], 2141509);
	ck_assert_uint_eq(vm.v[VM_PSWPIN], 1304821);
	ck_assert_uint_eq(vm.v[VM_PSWPOUT], 2517043);
	ck_assert_uint_eq(vm.v[VM_PGPGIN], 44197860);
	ck_assert_uint_eq(vm.v[VM_PGPGOUT], 3561004);
	/* "pgscan_direct_throttle" is not "pgscan_direct" */
	ck_assert_uint_eq(vm.v[VM_PGSCAN_DIRECT], 412307);
	ck_assert_uint_eq(vm.v[VM_PGSCAN_KSWAPD], 13419987);
	/* absent keys: have bit clear and value 0, never stale */
	ck_assert_uint_eq(vm.v[VM_WORKINGSET_REFAULT_ANON], 0);
	ck_assert_uint_eq(vm.v[VM_PGSTEAL_KSWAPD], 0);
	ck_assert_uint_eq(vm.v[VM_OOM_KILL], 0);
}
END_TEST

START_TEST(test_vmstat_refault_both_names)
{
	struct vmstat vm;

	/* the suffixed name wins, whichever comes first */
	ck_assert_int_eq(VMSTAT("workingset_refault 5\n"
				"workingset_refault_file 7\n",
			     &vm),
	    0);
	ck_assert_uint_eq(vm.v[VM_WORKINGSET_REFAULT_FILE], 7);
	ck_assert_uint_eq(vm.have, 1u << VM_WORKINGSET_REFAULT_FILE);
	ck_assert_int_eq(VMSTAT("workingset_refault_file 7\n"
				"workingset_refault 5\n",
			     &vm),
	    0);
	ck_assert_uint_eq(vm.v[VM_WORKINGSET_REFAULT_FILE], 7);
	VMSTAT_FAILS("workingset_refault 5\nworkingset_refault 5\n", -EINVAL);
}
END_TEST

START_TEST(test_vmstat_garbage)
{
	struct vmstat vm;

	VMSTAT_FAILS("", -EINVAL);
	VMSTAT_FAILS("\n \n", -EINVAL);
	VMSTAT_FAILS("pgfault\n", -EINVAL);
	VMSTAT_FAILS("pgfault x\n", -EINVAL);
	VMSTAT_FAILS("pgfault 1 2\n", -EINVAL);
	VMSTAT_FAILS("pgfault -1\n", -EINVAL);
	VMSTAT_FAILS("pgfault 1\npgfault 1\n", -EINVAL);
	VMSTAT_FAILS("pgfault 18446744073709551616\n", -ERANGE);
	/* unknown keys are checked too: a malformed file is malformed */
	VMSTAT_FAILS("nr_free_pages\npgfault 1\n", -EINVAL);
	VMSTAT_FAILS("nr_free_pages 18446744073709551616\n", -ERANGE);
	/* prefixes and suffixes of kept names are other keys */
	ck_assert_int_eq(VMSTAT("pgfaul 1\npgfaults 2\noom_kills 3\n"
				"pgfault: 4\n",
			     &vm),
	    0);
	ck_assert_uint_eq(vm.have, 0);
	/* only unknown keys is a valid (if useless) vmstat */
	ck_assert_int_eq(VMSTAT("nr_free_pages 18446744073709551615", &vm), 0);
	ck_assert_uint_eq(vm.have, 0);
}
END_TEST

/* ----------------------------------------------------------- /proc/meminfo */

START_TEST(test_meminfo_x86_6x)
{
	static const uint64_t want[MI__MAX] = {
		[MI_MEMTOTAL] = 24683656,
		[MI_MEMFREE] = 24312148,
		[MI_MEMAVAILABLE] = 24364176,
		[MI_BUFFERS] = 4192,
		[MI_CACHED] = 235728,
		[MI_SWAPCACHED] = 0,
		[MI_ACTIVE] = 107244,
		[MI_INACTIVE] = 130444,
		[MI_SWAPTOTAL] = 0,
		[MI_SWAPFREE] = 0,
		[MI_DIRTY] = 932,
		[MI_ANONPAGES] = 8592,
		[MI_MAPPED] = 10392,
		[MI_SHMEM] = 8952,
		[MI_SRECLAIMABLE] = 55328,
		[MI_SUNRECLAIM] = 22956,
		[MI_KERNELSTACK] = 1316,
		[MI_PAGETABLES] = 1592,
	};
	struct meminfo mi;
	int k;

	ck_assert_int_eq(MEMINFO(x86_meminfo, &mi), 0);
	ck_assert_uint_eq(mi.have, (1u << MI__MAX) - 1);
	for (k = 0; k < MI__MAX; k++)
		ck_assert_msg(mi.kb[k] == want[k], "%s: %ju != %ju",
		    meminfo_key_name(k), (uintmax_t)mi.kb[k],
		    (uintmax_t)want[k]);
}
END_TEST

START_TEST(test_meminfo_active_anon)
{
	struct meminfo mi;
	uint32_t want;

	/* Active(anon)/Active(file) present, Active: absent */
	ck_assert_int_eq(MEMINFO(old_meminfo, &mi), 0);
	want = (1u << MI_MEMTOTAL) | (1u << MI_MEMFREE) | (1u << MI_BUFFERS) |
	    (1u << MI_CACHED) | (1u << MI_SWAPCACHED) | (1u << MI_INACTIVE);
	ck_assert_uint_eq(mi.have, want);
	ck_assert_uint_eq(mi.kb[MI_ACTIVE], 0);
	ck_assert_uint_eq(mi.kb[MI_INACTIVE], 359520);
	ck_assert_uint_eq(mi.kb[MI_CACHED], 406756);
	ck_assert_uint_eq(mi.kb[MI_SWAPCACHED], 10444);
	ck_assert_uint_eq(mi.kb[MI_MEMTOTAL], 1899564);
	ck_assert_uint_eq(mi.kb[MI_MEMFREE], 109012);
	ck_assert_uint_eq(mi.kb[MI_BUFFERS], 14732);
	ck_assert_uint_eq(mi.kb[MI_MEMAVAILABLE], 0);

	/* Active(anon) after Active: neither overwrites nor duplicates */
	ck_assert_int_eq(MEMINFO("Active:  10 kB\nActive(anon):  3 kB\n"
				 "Active(file):  7 kB\n",
			     &mi),
	    0);
	ck_assert_uint_eq(mi.kb[MI_ACTIVE], 10);
	ck_assert_uint_eq(mi.have, 1u << MI_ACTIVE);
}
END_TEST

START_TEST(test_meminfo_garbage)
{
	struct meminfo mi;

	MEMINFO_FAILS("", -EINVAL);
	MEMINFO_FAILS("\n", -EINVAL);
	MEMINFO_FAILS("MemTotal 8041504 kB\n", -EINVAL); /* no colon */
	MEMINFO_FAILS("MemTotal:\n", -EINVAL);
	MEMINFO_FAILS(":  5 kB\n", -EINVAL);
	MEMINFO_FAILS("MemTotal: x kB\n", -EINVAL);
	MEMINFO_FAILS("MemTotal: 8041504 MB\n", -EINVAL);
	MEMINFO_FAILS("MemTotal: 8041504 kB extra\n", -EINVAL);
	MEMINFO_FAILS("MemTotal: 8041504\n", -EINVAL); /* kept: must be kB */
	MEMINFO_FAILS("MemTotal: 1 kB\nMemTotal: 1 kB\n", -EINVAL);
	MEMINFO_FAILS("MemTotal: 18446744073709551616 kB\n", -ERANGE);
	MEMINFO_FAILS("Bogus: 1 MB\n", -EINVAL);
	MEMINFO_FAILS("MemTotal: 1 kB\r\n", -EINVAL);
	/* a key cut at "kB" or before it (but after a digit) */
	ck_assert_int_eq(feed(w_meminfo, "MemFree: 12 kB", 12, &mi), -EINVAL);
	ck_assert_int_eq(feed(w_meminfo, "MemFree: 12 kB", 13, &mi), -EINVAL);
	ck_assert_int_eq(feed(w_meminfo, "MemFree: 12 kB", 14, &mi), 0);
	ck_assert_uint_eq(mi.kb[MI_MEMFREE], 12);
	/* vendor lines with counts: fine */
	ck_assert_int_eq(MEMINFO("HugePages_Total:   0\nION_heap:  5 kB\n",
			     &mi),
	    0);
	ck_assert_uint_eq(mi.have, 0);
}
END_TEST

/* ------------------------------------------------------------------ sysfs */

START_TEST(test_u64_text)
{
	uint64_t v;

	ck_assert_int_eq(U64("1804800\n", &v), 0);
	ck_assert_uint_eq(v, 1804800);
	ck_assert_int_eq(U64("1024", &v), 0);
	ck_assert_uint_eq(v, 1024);
	ck_assert_int_eq(U64(" 42 \n\n", &v), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(U64("0\n", &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(U64("18446744073709551615\n", &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	/* not NUL-terminated: "123456" with len 3 */
	ck_assert_int_eq(feed(w_u64, "123456", 3, &v), 0);
	ck_assert_uint_eq(v, 123);

	U64_FAILS("", -ENODATA);
	U64_FAILS("\n", -ENODATA);
	U64_FAILS(" \t\n", -ENODATA);
	assert_fails_untouched(w_u64, NULL, 0, sizeof(v), -ENODATA);
	U64_FAILS("<unsupported>\n", -EINVAL);
	U64_FAILS("12 34\n", -EINVAL);
	U64_FAILS("-1\n", -EINVAL);
	U64_FAILS("+1\n", -EINVAL);
	U64_FAILS("0x10\n", -EINVAL);
	U64_FAILS("1.5\n", -EINVAL);
	U64_FAILS("12\r\n", -EINVAL);
	U64_FAILS("18446744073709551616\n", -ERANGE);
	assert_fails_untouched(w_u64, "1\0", 2, sizeof(v), -EINVAL);
}
END_TEST

START_TEST(test_key_names)
{
	static const char *const vm[VM__MAX] = {
		"pgfault",
		"pgmajfault",
		"pswpin",
		"pswpout",
		"pgpgin",
		"pgpgout",
		"pgscan_kswapd",
		"pgscan_direct",
		"pgsteal_kswapd",
		"pgsteal_direct",
		"workingset_refault_anon",
		"workingset_refault_file",
		"oom_kill",
	};
	static const char *const mi[MI__MAX] = {
		"MemTotal",
		"MemFree",
		"MemAvailable",
		"Buffers",
		"Cached",
		"SwapCached",
		"Active",
		"Inactive",
		"SwapTotal",
		"SwapFree",
		"Dirty",
		"AnonPages",
		"Mapped",
		"Shmem",
		"SReclaimable",
		"SUnreclaim",
		"KernelStack",
		"PageTables",
	};
	int k;

	for (k = 0; k < VM__MAX; k++)
		ck_assert_str_eq(vmstat_key_name(k), vm[k]);
	for (k = 0; k < MI__MAX; k++)
		ck_assert_str_eq(meminfo_key_name(k), mi[k]);
	ck_assert_ptr_null(vmstat_key_name(VM__MAX));
	ck_assert_ptr_null(vmstat_key_name((enum vmstat_key) - 1));
	ck_assert_ptr_null(meminfo_key_name(MI__MAX));
	ck_assert_ptr_null(meminfo_key_name((enum meminfo_key) - 1));
}
END_TEST

/* ------------------------------------------------------------- robustness */

/*
 * A parse that fails returns a known error and leaves ret as it was; one
 * that succeeds returns 0. Anything else (a crash, an over-read under ASan,
 * a partial write) fails the test.
 */
static void
check_one(size_t p, const char *text, size_t len, const char *what, size_t at)
{
	static unsigned char ret[sizeof(struct procstat)];
	static unsigned char ref[sizeof(struct procstat)];
	size_t size = parsers[p].size;
	int r;

	memset(ret, 0x5a, size);
	memset(ref, 0x5a, size);
	r = feed(parsers[p].fn, text, len, ret);
	ck_assert_msg(r == 0 || r == -EINVAL || r == -ERANGE || r == -ENODATA,
	    "%s on %s at %zu: %d", parsers[p].name, what, at, r);
	if (r < 0)
		ck_assert_msg(memcmp(ret, ref, size) == 0,
		    "%s on %s at %zu: ret written on failure", parsers[p].name,
		    what, at);
}

START_TEST(test_every_prefix)
{
	size_t f, p, cut, n;

	/* each fixture, cut at every offset, fed to every parser */
	for (f = 0; f < NFIXTURES; f++) {
		n = strlen(fixtures[f].text);
		for (p = 0; p < NPARSERS; p++)
			for (cut = 0; cut <= n; cut++)
				check_one(p, fixtures[f].text, cut,
				    fixtures[f].name, cut);
	}
}
END_TEST

START_TEST(test_each_fixture_own_parser)
{
	struct loadavg la;
	struct psi ps;
	struct vmstat vm;
	struct meminfo mi;
	uint64_t v;
	size_t f;

	/* sanity for test_every_prefix: the whole texts do parse */
	for (f = 0; f < 5; f++)
		ck_assert_int_eq(STAT(fixtures[f].text), 0);
	ck_assert_int_eq(VMSTAT(x86_vmstat, &vm), 0);
	ck_assert_int_eq(MEMINFO(x86_meminfo, &mi), 0);
	ck_assert_int_eq(PSI(psi_io, &ps), 0);
	ck_assert_int_eq(LOADAVG(loadavg_txt, &la), 0);
	ck_assert_int_eq(U64(fixtures[NFIXTURES - 1].text, &v), 0);
	/* and the other parsers reject them */
	ck_assert_int_eq(VMSTAT(x86_stat, &vm), -EINVAL);
	ck_assert_int_eq(MEMINFO(x86_vmstat, &mi), -EINVAL);
	ck_assert_int_eq(PSI(x86_meminfo, &ps), -EINVAL);
	ck_assert_int_eq(LOADAVG(psi_cpu, &la), -EINVAL);
	ck_assert_int_eq(STAT(loadavg_txt), -EINVAL);
	ck_assert_int_eq(U64(loadavg_txt, &v), -EINVAL);
}
END_TEST

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

START_TEST(test_mutations)
{
	static const char alphabet[] = "0123456789 \t\n:./=-+xkBcpu\r\0\377";
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	size_t f, p, n, len, j;
	char *b;
	int i, k;

	/* deterministic byte flips and cuts of every fixture */
	for (f = 0; f < NFIXTURES; f++) {
		n = strlen(fixtures[f].text);
		b = malloc(n + 1);
		for (i = 0; i < 300; i++) {
			memcpy(b, fixtures[f].text, n);
			for (k = 1 + (int)(xorshift(&seed) % 4); k > 0; k--) {
				j = (size_t)(xorshift(&seed) % n);
				b[j] = alphabet[xorshift(&seed) %
				    (sizeof(alphabet) - 1)];
			}
			len = (size_t)(xorshift(&seed) % (n + 1));
			if (i % 2)
				len = n;
			for (p = 0; p < NPARSERS; p++)
				check_one(p, b, len, fixtures[f].name,
				    (size_t)i);
		}
		free(b);
	}
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("proc_stat");
	TCase *tc;

	tc = tcase_create("procstat");
	tcase_add_test(tc, test_stat_x86_6x);
	tcase_add_test(tc, test_stat_android_offline);
	tcase_add_test(tc, test_stat_hotplug_pair);
	tcase_add_test(tc, test_stat_old_kernel_4cols);
	tcase_add_test(tc, test_stat_8cols_and_extra_cols);
	tcase_add_test(tc, test_stat_minimal_and_layout);
	tcase_add_test(tc, test_stat_missing_aggregate_and_empty);
	tcase_add_test(tc, test_stat_garbage);
	tcase_add_test(tc, test_stat_overflow);
	tcase_add_test(tc, test_stat_duplicates);
	tcase_add_test(tc, test_stat_cpu_max);
	tcase_add_test(tc, test_stat_not_nul_terminated);
	tcase_add_test(tc, test_stat_truncated);
	tcase_add_test(tc, test_stat_long_intr);
	suite_add_tcase(s, tc);

	tc = tcase_create("loadavg");
	tcase_add_test(tc, test_loadavg_real);
	tcase_add_test(tc, test_loadavg_locale);
	tcase_add_test(tc, test_loadavg_garbage);
	suite_add_tcase(s, tc);

	tc = tcase_create("psi");
	tcase_add_test(tc, test_psi_real);
	tcase_add_test(tc, test_psi_without_full);
	tcase_add_test(tc, test_psi_garbage);
	suite_add_tcase(s, tc);

	tc = tcase_create("vmstat");
	tcase_add_test(tc, test_vmstat_x86_6x);
	tcase_add_test(tc, test_vmstat_android_old_names);
	tcase_add_test(tc, test_vmstat_refault_both_names);
	tcase_add_test(tc, test_vmstat_garbage);
	suite_add_tcase(s, tc);

	tc = tcase_create("meminfo");
	tcase_add_test(tc, test_meminfo_x86_6x);
	tcase_add_test(tc, test_meminfo_active_anon);
	tcase_add_test(tc, test_meminfo_garbage);
	suite_add_tcase(s, tc);

	tc = tcase_create("sysfs");
	tcase_add_test(tc, test_u64_text);
	tcase_add_test(tc, test_key_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("robustness");
	tcase_add_test(tc, test_every_prefix);
	tcase_add_test(tc, test_each_fixture_own_parser);
	tcase_add_test(tc, test_mutations);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(suite());
}

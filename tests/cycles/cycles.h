/* SPDX-License-Identifier: Apache-2.0 */
/* Two files that call each other: scripts/file_cycles.py must see it. */
#ifndef VITALS_TEST_CYCLES_H
#define VITALS_TEST_CYCLES_H

int cycles_a(int n);
int cycles_b(int n);
int cycles_leaf(int n);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
#include "cycles.h"

int
cycles_a(int n)
{
	return n > 0 ? cycles_b(n - 1) : cycles_leaf(n);
}

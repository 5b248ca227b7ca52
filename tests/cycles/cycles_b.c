/* SPDX-License-Identifier: Apache-2.0 */
#include "cycles.h"

int
cycles_b(int n)
{
	return n > 0 ? cycles_a(n - 1) : 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A shared object the working-set kernel test loads into its child with
 * dlopen, so the child's maps gain this file's segments mid-monitoring.
 */
int wss_testlib_data[4096] = { 1 };

int
wss_testlib_touch(int n)
{
	int i, s = 0;

	for (i = 0; i < n && i < 4096; i++)
		s += wss_testlib_data[i]++;
	return s;
}

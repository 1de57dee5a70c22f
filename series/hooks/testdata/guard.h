/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _GUARD_H
#define _GUARD_H

int a;

#endif


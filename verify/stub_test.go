package verify

import (
	"strings"
	"testing"
)

// TestStubParityKernelHeaders: 6.12's own headers with the kernel's stub
// idiom, each created by a patch: declarations under
// "#if IS_ENABLED(CONFIG_X)" (or #ifdef) with static inline stubs under
// #else, every stub there and of the same type. STUB_PARITY reports
// nothing on them.
func TestStubParityKernelHeaders(t *testing.T) {
	files := []string{"include/linux/usb/onboard_dev.h", "include/linux/buildid.h", "include/linux/acpi_mdio.h", "include/linux/dm-verity-loadpin.h"}
	s := creationSeries(t, files, treeFiles(t, debianTree(t), files))
	for _, f := range only(Run(s, Options{}), "STUB_PARITY") {
		t.Errorf("on the kernel's own header: %s: %s", f.Where(), f.Message)
	}
}

// TestStubParityCallers: a declaration needs no stub when every caller
// sits under the same option: 6.12's kernel/sched/ext.h declares
// init_scx_entity() and task_should_scx() only under
// CONFIG_SCHED_CLASS_EXT, and kernel/sched/core.c calls them under
// "#ifdef CONFIG_SCHED_CLASS_EXT" (two errors before). A stub taken out
// of usb/onboard_dev.h, whose function a file calls unguarded, is still
// found.
func TestStubParityCallers(t *testing.T) {
	tree := debianTree(t)
	files := []string{"kernel/sched/ext.h", "kernel/sched/core.c"}
	s := creationSeries(t, files, treeFiles(t, tree, files))
	c := testChecker(t, s, ccRules[0])
	checkStubParity(c)
	for _, f := range c.out {
		t.Errorf("on 6.12's ext.h: %s: %s", f.Where(), f.Message)
	}

	const h = "include/linux/usb/onboard_dev.h"
	content := treeFiles(t, tree, []string{h})
	stub := "static inline void onboard_dev_destroy_pdevs(struct list_head *pdev_list) {}\n"
	if !strings.Contains(string(content[h]), stub) {
		t.Fatalf("%s has changed", h)
	}
	content[h] = []byte(strings.Replace(string(content[h]), stub, "", 1))
	content["drivers/usb/x.c"] = []byte("// SPDX-License-Identifier: GPL-2.0\n#include <linux/usb/onboard_dev.h>\n\nvoid x_remove(struct list_head *l)\n{\n\tonboard_dev_destroy_pdevs(l);\n}\n")
	s = creationSeries(t, []string{h, "drivers/usb/x.c"}, content)
	c = testChecker(t, s, ccRules[0])
	checkStubParity(c)
	if len(c.out) != 1 || !strings.Contains(c.out[0].Message, "onboard_dev_destroy_pdevs() is declared under CONFIG_USB_ONBOARD_DEV") {
		t.Errorf("STUB_PARITY %v, want onboard_dev_destroy_pdevs()'s missing stub", c.out)
	}
}

package verify

import (
	"strings"
	"testing"

	"kpatch/plumbing/kernelsrc"
)

// TestUnusedStaticTableMacro: a static function used only through a
// macro of a table's entry is used: 6.12's amdgpu_pm.c defines
// amdgpu_get_pp_dpm_vclk1() and amdgpu_set_pp_dpm_vclk1() for
// AMDGPU_DEVICE_ATTR_RW(pp_dpm_vclk1, ...) in its amdgpu_device_attrs[]
// table (the macro, from amdgpu_pm.h, pastes the names). A patch adding
// such a pair (a vclk2, made from vclk1's code) got two UNUSED_STATIC
// errors read with the prelude, as did the merged code of
// drivers/gpu/drm/amd/pm (nine). A pair without its entry is still
// unused.
func TestUnusedStaticTableMacro(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	const path = "drivers/gpu/drm/amd/pm/amdgpu_pm.c"
	const pair = "static ssize_t amdgpu_get_pp_dpm_vclk1(struct device *dev,\n\t\tstruct device_attribute *attr,\n\t\tchar *buf)\n{\n\treturn amdgpu_get_pp_dpm_clock(dev, PP_VCLK1, buf);\n}\n\nstatic ssize_t amdgpu_set_pp_dpm_vclk1(struct device *dev,\n\t\tstruct device_attribute *attr,\n\t\tconst char *buf,\n\t\tsize_t count)\n{\n\treturn amdgpu_set_pp_dpm_clock(dev, PP_VCLK1, buf, count);\n}\n"
	const entry = "\tAMDGPU_DEVICE_ATTR_RW(pp_dpm_vclk1,"
	for _, c := range []struct {
		name      string
		withEntry bool
		want      int
	}{
		{"with its table entry", true, 0},
		{"without", false, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := treeMail(t, tree, "drm/amd/pm: add vclk2", "Add it.", []string{path}, func(files map[string]string) {
				text := files[path]
				if !strings.Contains(text, pair) || !strings.Contains(text, entry) {
					t.Fatalf("%s has changed", path)
				}
				text = strings.Replace(text, pair, pair+"\n"+strings.ReplaceAll(strings.ReplaceAll(pair, "vclk1", "vclk2"), "PP_VCLK1", "PP_VCLK1"), 1)
				if c.withEntry {
					i := strings.Index(text, entry)
					end := i + strings.Index(text[i:], "),\n") + 3 // the entry's two lines
					text = text[:end] + strings.ReplaceAll(text[i:end], "vclk1", "vclk2") + text[end:]
				}
				files[path] = text
			})
			got := only(Run(s, Options{Ignore: []string{"SPELLING"}}), "UNUSED_STATIC")
			if len(got) != c.want {
				t.Errorf("UNUSED_STATIC %v, want %d", got, c.want)
			}
		})
	}
}

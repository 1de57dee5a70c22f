package verify

import (
	"strings"
	"testing"
)

// TestTypeLimitsScope: TYPE_LIMITS judges a comparison by the
// declaration of its name in scope there, as the compiler does. 6.12's
// asn1_encode_length() (lib/asn1_encoder.c) tests its int len with
// "len < 0" on purpose (negative lengths are its convention); with an
// inner block that declares an unsigned long len of its own, verify took
// that type for the parameter and said "len < 0 is always false", so a
// maintainer who trusted it would remove a working check. The inner
// len's own "len < 0" is still found.
func TestTypeLimitsScope(t *testing.T) {
	fn := kernelFunc(t, "lib/asn1_encoder.c", "static int asn1_encode_length(")
	inner := "\t{\n\t\tunsigned long len = *data_len;\n\n\t\tif (len > 0xffff)\n\t\t\treturn -EINVAL;\n\t}\n"
	innerTest := "\t{\n\t\tunsigned long len = *data_len;\n\n\t\tif (len < 0)\n\t\t\treturn -EINVAL;\n\t}\n"
	const at = "\t\treturn -EINVAL;\n\n\tif (len < 0) {\n"
	if !strings.Contains(fn, at) {
		t.Fatalf("asn1_encode_length() has changed:\n%s", fn)
	}
	for _, c := range []struct {
		name, block string
		want        []string // the lines TYPE_LIMITS reports
	}{
		{"a shadow in an inner block", inner, nil},
		{"the inner len tested", innerTest, []string{"\t\tif (len < 0)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "// SPDX-License-Identifier: GPL-2.0\n#include <linux/asn1_encoder.h>\n\n" +
				strings.Replace(fn, at, "\t\treturn -EINVAL;\n\n"+c.block+"\n\tif (len < 0) {\n", 1)
			s := creationSeries(t, []string{"lib/x.c"}, map[string][]byte{"lib/x.c": []byte(src)})
			var got []string
			lines := strings.Split(src, "\n")
			for _, f := range only(Run(s, Options{}), "TYPE_LIMITS") {
				got = append(got, lines[f.Line-1])
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("TYPE_LIMITS on %q, want %q", got, c.want)
			}
		})
	}
}

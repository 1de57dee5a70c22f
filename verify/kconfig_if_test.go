package verify

import (
	"strings"
	"testing"

	"kpatch/plumbing/kernelsrc"
)

// TestKconfigSelectIf: in "select X if Y" X is what is selected and Y a
// condition. wireguard's "select CRYPTO_CHACHA_MIPS if CPU_MIPS32_R2"
// (6.12's drivers/net/Kconfig) with its condition misspelled was
// reported as "select CPU_MIPS32_R3: no Kconfig file defines ...": the
// message now says the line tests an unknown symbol; a misspelled
// target is still "select X".
func TestKconfigSelectIf(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	const path = "drivers/net/Kconfig"
	const line = "\tselect CRYPTO_CHACHA_MIPS if CPU_MIPS32_R2\n"
	for _, c := range []struct{ name, to, want string }{
		{"condition", "\tselect CRYPTO_CHACHA_MIPS if CPU_MIPS32_R3\n", `"select CRYPTO_CHACHA_MIPS if CPU_MIPS32_R3" tests CPU_MIPS32_R3`},
		{"target", "\tselect CRYPTO_CHACHA_MIPZ if CPU_MIPS32_R2\n", "select CRYPTO_CHACHA_MIPZ: no Kconfig file defines CRYPTO_CHACHA_MIPZ"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := treeMail(t, tree, "wireguard: rename", "Rename it.", []string{path}, func(files map[string]string) {
				if !strings.Contains(files[path], line) {
					t.Fatalf("%s has changed", path)
				}
				files[path] = strings.Replace(files[path], line, c.to, 1)
			})
			got := only(Run(s, Options{}), "KCONFIG_SYMBOL")
			if len(got) != 1 || !strings.Contains(got[0].Message, c.want) {
				t.Errorf("KCONFIG_SYMBOL %v, want one saying %q", got, c.want)
			}
		})
	}
}

// TestKconfigUnknownAlternative: "depends on A || B" with A unknown
// still lets the option be (B): no error. 6.12's exynos4-is Kconfig
// depends on "SOC_EXYNOS4212 || ... || COMPILE_TEST" where the 6.1 tree
// lacks SOC_EXYNOS4212 (an error on the merged code of
// drivers/media/platform/samsung/exynos4-is); here an alternative
// misspelled on 6.12. A misspelled sole dependency is still an error.
func TestKconfigUnknownAlternative(t *testing.T) {
	tree, err := kernelsrc.Open(debianTree(t), "v6.12", false)
	if err != nil {
		t.Fatal(err)
	}
	const path = "drivers/media/platform/samsung/exynos4-is/Kconfig"
	const line = "\tdepends on SOC_EXYNOS4212 || SOC_EXYNOS4412 || SOC_EXYNOS5250 || COMPILE_TEST\n"
	for _, c := range []struct {
		name, from, to string
		want           int
	}{
		{"alternative", line, strings.Replace(line, "SOC_EXYNOS4212", "SOC_EXYNOS4213", 1), 0},
		{"sole dependency", "\tdepends on I2C\n\tdepends on SOC_EXYNOS4212", "\tdepends on I2D\n\tdepends on SOC_EXYNOS4212", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := treeMail(t, tree, "media: exynos4-is: depend", "Depend.", []string{path}, func(files map[string]string) {
				if !strings.Contains(files[path], c.from) {
					t.Fatalf("%s has changed", path)
				}
				files[path] = strings.Replace(files[path], c.from, c.to, 1)
			})
			if got := only(Run(s, Options{}), "KCONFIG_SYMBOL"); len(got) != c.want {
				t.Errorf("KCONFIG_SYMBOL %v, want %d", got, c.want)
			}
		})
	}
}

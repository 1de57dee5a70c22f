package maintainers

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func parseTestdata(t *testing.T) *File {
	t.Helper()
	fh, err := os.Open(filepath.Join("testdata", "MAINTAINERS"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, err := Parse(fh)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestParse(t *testing.T) {
	f := parseTestdata(t)
	var names []string
	for _, s := range f.All {
		names = append(names, s.Name)
	}
	wantNames := []string{
		"SCHEDULER", "GENERIC ENTRY CODE", "X86 ARCHITECTURE (32-BIT AND 64-BIT)",
		"PERFORMANCE EVENTS SUBSYSTEM", "PTRACE SUPPORT", "GENERIC INCLUDE/ASM HEADER FILES",
		"BITOPS API", "USERSPACE STACK UNWINDING (TEST)", "BARE DIRECTORY (TEST)",
		"EXCLUDE AND REGEX (TEST)", "LAST MATCH WINS (TEST)", "LIST WITH A NAME (TEST)", "THE REST",
	}
	if !reflect.DeepEqual(names, wantNames) {
		t.Fatalf("section names:\n got %q\nwant %q", names, wantNames)
	}

	bare := f.All[8]
	want := &Section{
		Name:        "BARE DIRECTORY (TEST)",
		Line:        131,
		Maintainers: []string{"Bare Dir <bare@example.org>"},
		Lists:       []string{"bare@example.org"},
		Status:      "Maintained",
		Files:       []string{"drivers/bare", "drivers/glob/*", "drivers/one?.c"},
		Entries: []Entry{
			{'M', "Bare Dir <bare@example.org>", 132},
			{'L', "bare@example.org", 135},
			{'S', "Maintained", 136},
			{'F', "drivers/bare", 137},
			{'F', "drivers/glob/*", 138},
			{'F', "drivers/one?.c", 139},
		},
	}
	bare.files, bare.excludes, bare.regex = nil, nil, nil
	if !reflect.DeepEqual(bare, want) {
		t.Errorf("section:\n got %+v\nwant %+v", bare, want)
	}

	regex := f.All[9]
	if got := regex.Excludes; !reflect.DeepEqual(got, []string{"drivers/regex/excluded/"}) {
		t.Errorf("Excludes = %q", got)
	}
	if got := regex.Regex; !reflect.DeepEqual(got, []string{"re gex[0-9]  # a /x comment"}) {
		t.Errorf("Regex = %q", got)
	}
	perf := f.All[3]
	if len(perf.Reviewers) != 6 || perf.Reviewers[5] != `"Liang, Kan" <kan.liang@linux.intel.com>` ||
		len(perf.Trees) != 3 || len(perf.Web) != 1 || perf.Status != "Supported" {
		t.Errorf("PERFORMANCE EVENTS SUBSYSTEM parsed as %+v", perf)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"entry before section", "\n# comment\nM:\tA <a@b>\n", "line 3: M: entry before any section name"},
		{"bad F pattern", "S1\nM:\tA <a@b>\n\nS2\nF:\tdrivers/[abc/\n", "line 5: F:"},
		{"bad X pattern", "S1\nX:\tdrivers/(\n", "line 2: X:"},
		{"bad N regex", "S1\nS:\tMaintained\nN:\t(?<=x)y\n", "line 3: N:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.input))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want it to contain %q", err, tt.want)
			}
			// ParseLazy checks as much, and says the same.
			if _, lerr := ParseLazy([]byte(tt.input)); lerr == nil || lerr.Error() != err.Error() {
				t.Fatalf("ParseLazy error = %v, Parse's %v", lerr, err)
			}
		})
	}
}

func TestParseCRLFAndNoFinalNewline(t *testing.T) {
	f, err := Parse(strings.NewReader("A\r\nM:\tA <a@example.org>\r\nF:\ta/\r\n\r\nB\nF:\tb/"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.All) != 2 || f.All[0].Files[0] != "a/" || f.All[1].Files[0] != "b/" || f.All[1].Line != 5 {
		t.Fatalf("parsed %+v %+v", f.All[0], f.All[1])
	}
	lf, err := ParseLazy([]byte("A\r\nM:\tA <a@example.org>\r\nF:\ta/\r\n\r\nB\nF:\tb/"))
	if err != nil {
		t.Fatal(err)
	}
	if s := lf.Sections("b/x.c"); len(s) != 1 || !reflect.DeepEqual(s[0].Entries, f.All[1].Entries) || s[0].Line != 5 {
		t.Fatalf("lazily parsed %+v", s)
	}
}

func TestRecipients(t *testing.T) {
	f := parseTestdata(t)
	const (
		josh    = "Josh Poimboeuf <jpoimboe@kernel.org>"
		steven  = "Steven Rostedt <rostedt@goodmis.org>"
		bare    = "Bare Dir <bare@example.org>"
		last    = "Last Match <last@example.org>"
		regexp  = "Regex Person <regex@example.org>"
		one     = "One <one@example.org>"
		two     = "Two <two@example.org>"
		metux   = `"Weigelt, metux IT consult" <info@metux.net>`
		lkml    = "linux-kernel@vger.kernel.org"
		lkmlUp  = "LINUX-KERNEL@vger.kernel.org"
		trace   = "linux-trace-kernel@vger.kernel.org"
		regexL  = "linux-regex@example.org"
		restSec = "THE REST"
	)
	tests := []struct {
		name     string
		paths    []string
		dirs     []string // directories reported by IsDir; nil leaves IsDir unset
		sections []string // Sections(paths[0])
		to, cc   []string
	}{
		{
			name:     "new file in F: directory",
			paths:    []string{"kernel/unwind/user.c"},
			sections: []string{"USERSPACE STACK UNWINDING (TEST)", restSec},
			to:       []string{josh, steven},
			cc:       []string{trace, lkml},
		},
		{
			name:     "glob in file name",
			paths:    []string{"include/linux/unwind_user.h"},
			sections: []string{"USERSPACE STACK UNWINDING (TEST)", restSec},
			to:       []string{josh, steven},
			cc:       []string{trace, lkml},
		},
		{
			name:     "only THE REST; Linus is left out",
			paths:    []string{"kernel/fork.c"},
			sections: []string{restSec},
			cc:       []string{lkml},
		},
		{
			name:     "MAINTAINERS",
			paths:    []string{"MAINTAINERS"},
			sections: []string{restSec},
			cc:       []string{lkml},
		},
		{
			name:     "bare directory pattern, recursive; L: equal to an M: address dropped",
			paths:    []string{"drivers/bare/sub/x.c"},
			sections: []string{"BARE DIRECTORY (TEST)", "LAST MATCH WINS (TEST)", restSec},
			to:       []string{bare, last, regexp},
			cc:       []string{lkml}, // L: bare@example.org is M: Bare Dir's address
		},
		{
			name:     "bare pattern is a prefix when not known as a directory",
			paths:    []string{"drivers/barely.c"},
			sections: []string{"BARE DIRECTORY (TEST)", "LAST MATCH WINS (TEST)", restSec},
			to:       []string{bare, last, regexp},
			cc:       []string{lkml}, // L: bare@example.org is M: Bare Dir's address
		},
		{
			name:     "bare pattern known as a directory",
			paths:    []string{"drivers/barely.c"},
			dirs:     []string{"drivers/bare"},
			sections: []string{"LAST MATCH WINS (TEST)", restSec},
			to:       []string{last, regexp},
			cc:       []string{lkml},
		},
		{
			name:     "dir/* matches files directly in dir",
			paths:    []string{"drivers/glob/x.c"},
			sections: []string{"BARE DIRECTORY (TEST)", "LAST MATCH WINS (TEST)", restSec},
			to:       []string{bare, last, regexp},
			cc:       []string{lkml}, // L: bare@example.org is M: Bare Dir's address
		},
		{
			name:     "dir/* does not match below dir",
			paths:    []string{"drivers/glob/sub/x.c"},
			sections: []string{"LAST MATCH WINS (TEST)", restSec},
			to:       []string{last, regexp},
			cc:       []string{lkml},
		},
		{
			name:     "? matches one character",
			paths:    []string{"drivers/one1.c"},
			sections: []string{"BARE DIRECTORY (TEST)", "LAST MATCH WINS (TEST)", restSec},
			to:       []string{bare, last, regexp},
			cc:       []string{lkml}, // L: bare@example.org is M: Bare Dir's address
		},
		{
			name:     "? does not match two characters",
			paths:    []string{"drivers/one12.c"},
			sections: []string{"LAST MATCH WINS (TEST)", restSec},
			to:       []string{last, regexp},
			cc:       []string{lkml},
		},
		{
			name:     "duplicate names and addresses, address lists, lists",
			paths:    []string{"drivers/regex/x.c"},
			sections: []string{"EXCLUDE AND REGEX (TEST)", "LAST MATCH WINS (TEST)", restSec},
			to:       []string{regexp, one, two, metux, last},
			cc:       []string{regexL, lkmlUp},
		},
		{
			name:     "X: excludes",
			paths:    []string{"drivers/regex/excluded/x.c"},
			sections: []string{"LAST MATCH WINS (TEST)", restSec},
			to:       []string{last, regexp},
			cc:       []string{lkml},
		},
		{
			name:     "last matching F: of a section ranks it",
			paths:    []string{"drivers/regex/deep/file.c"},
			sections: []string{"EXCLUDE AND REGEX (TEST)", "LAST MATCH WINS (TEST)", restSec},
			to:       []string{regexp, one, two, metux, last},
			cc:       []string{regexL, lkmlUp},
		},
		{
			name:     "N: regex with /x white space and comment",
			paths:    []string{"drivers/misc/regex7.c"},
			sections: []string{"LAST MATCH WINS (TEST)", "EXCLUDE AND REGEX (TEST)", restSec},
			to:       []string{last, regexp, one, two, metux},
			cc:       []string{regexL, lkmlUp},
		},
		{
			name:     "L: with a name",
			paths:    []string{"drivers/team/a.c"},
			sections: []string{"LIST WITH A NAME (TEST)", "LAST MATCH WINS (TEST)", restSec},
			to:       []string{"Team Maintainer <team-maint@example.org>", last, regexp},
			cc:       []string{"NXP S32 Linux Team <s32@example.org>", lkml},
		},
		{
			name:     "series: paths in order, sections by depth",
			paths:    []string{"include/linux/sched.h", "include/linux/entry-common.h", "arch/x86/kernel/ptrace.c"},
			sections: []string{"SCHEDULER", restSec},
			to: []string{
				"Ingo Molnar <mingo@redhat.com>", "Peter Zijlstra <peterz@infradead.org>",
				"Juri Lelli <juri.lelli@redhat.com>", "Vincent Guittot <vincent.guittot@linaro.org>",
				"Dietmar Eggemann <dietmar.eggemann@arm.com>", steven,
				"Ben Segall <bsegall@google.com>", "Mel Gorman <mgorman@suse.de>",
				"Valentin Schneider <vschneid@redhat.com>", "Thomas Gleixner <tglx@linutronix.de>",
				"Andy Lutomirski <luto@kernel.org>", "Oleg Nesterov <oleg@redhat.com>",
				"Borislav Petkov <bp@alien8.de>", "Dave Hansen <dave.hansen@linux.intel.com>",
				"x86@kernel.org", `"H. Peter Anvin" <hpa@zytor.com>`,
			},
			cc: []string{lkml},
		},
		{
			name:     "glob crossing no slash; trailing-slash include dir",
			paths:    []string{"arch/x86/events/core.c", "include/asm-generic/bitops.h"},
			sections: []string{"PERFORMANCE EVENTS SUBSYSTEM", "X86 ARCHITECTURE (32-BIT AND 64-BIT)", restSec},
			to: []string{
				"Peter Zijlstra <peterz@infradead.org>", "Ingo Molnar <mingo@redhat.com>",
				"Arnaldo Carvalho de Melo <acme@kernel.org>", "Namhyung Kim <namhyung@kernel.org>",
				"Mark Rutland <mark.rutland@arm.com>", "Alexander Shishkin <alexander.shishkin@linux.intel.com>",
				"Jiri Olsa <jolsa@kernel.org>", "Ian Rogers <irogers@google.com>",
				"Adrian Hunter <adrian.hunter@intel.com>", `"Liang, Kan" <kan.liang@linux.intel.com>`,
				"Thomas Gleixner <tglx@linutronix.de>", "Borislav Petkov <bp@alien8.de>",
				"Dave Hansen <dave.hansen@linux.intel.com>", "x86@kernel.org",
				`"H. Peter Anvin" <hpa@zytor.com>`, "Yury Norov <yury.norov@gmail.com>",
				"Rasmus Villemoes <linux@rasmusvillemoes.dk>", "Arnd Bergmann <arnd@arndb.de>",
			},
			cc: []string{"linux-perf-users@vger.kernel.org", lkml, "linux-arch@vger.kernel.org"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.IsDir = nil
			if tt.dirs != nil {
				f.IsDir = func(name string) bool {
					for _, d := range tt.dirs {
						if d == name {
							return true
						}
					}
					return false
				}
			}
			var names []string
			for _, s := range f.Sections(tt.paths[0]) {
				names = append(names, s.Name)
			}
			if !reflect.DeepEqual(names, tt.sections) {
				t.Errorf("Sections(%q) = %q, want %q", tt.paths[0], names, tt.sections)
			}
			to, cc := f.Recipients(tt.paths)
			if !reflect.DeepEqual(to, tt.to) {
				t.Errorf("to = %q\nwant %q", to, tt.to)
			}
			if !reflect.DeepEqual(cc, tt.cc) {
				t.Errorf("cc = %q\nwant %q", cc, tt.cc)
			}
		})
	}
}

func TestParseEmail(t *testing.T) {
	tests := []struct {
		in, name, addr, formatted string
	}{
		{"Josh Poimboeuf <jpoimboe@kernel.org>", "Josh Poimboeuf", "jpoimboe@kernel.org", "Josh Poimboeuf <jpoimboe@kernel.org>"},
		{`"H. Peter Anvin" <hpa@zytor.com>`, `"H. Peter Anvin"`, "hpa@zytor.com", `"H. Peter Anvin" <hpa@zytor.com>`},
		{"Juri Lelli <juri.lelli@redhat.com> (SCHED_DEADLINE)", "Juri Lelli", "juri.lelli@redhat.com", "Juri Lelli <juri.lelli@redhat.com>"},
		{"x86@kernel.org", "", "x86@kernel.org", "x86@kernel.org"},
		{"<bare@example.org>", "", "bare@example.org", "bare@example.org"},
		{"Uwe Kleine-König <u@example.org>", `"Uwe Kleine-König"`, "u@example.org", `"Uwe Kleine-König" <u@example.org>`},
		{`Ann "Q" Lee <q@example.org>`, `"Ann \"Q\" Lee"`, "q@example.org", `"Ann \"Q\" Lee" <q@example.org>`},
		{"no address here", "", "", ""},
	}
	for _, tt := range tests {
		name, addr := parseEmail(tt.in)
		if name != tt.name || addr != tt.addr {
			t.Errorf("parseEmail(%q) = %q, %q; want %q, %q", tt.in, name, addr, tt.name, tt.addr)
		}
		if got := formatEmail(name, addr); got != tt.formatted {
			t.Errorf("formatEmail(parseEmail(%q)) = %q, want %q", tt.in, got, tt.formatted)
		}
	}
}

func TestSplitAddressList(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"A <a@example.org>", []string{"A <a@example.org>"}},
		{`"Lee, Chun-Yi" <jlee@suse.com>`, []string{`"Lee, Chun-Yi" <jlee@suse.com>`}},
		{"Enrico Weigelt, metux IT consult <info@metux.net>", []string{"Enrico Weigelt, metux IT consult <info@metux.net>"}},
		{"a@example.org, B <b@example.org>,", []string{"a@example.org", "B <b@example.org>"}},
		{"A (x, y) <a@example.org>", []string{"A (x, y) <a@example.org>"}},
	}
	for _, tt := range tests {
		if got := splitAddressList(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitAddressList(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStripExtended(t *testing.T) {
	tests := []struct{ in, want string }{
		{"bcm[9]?63138", "bcm[9]?63138"},
		{"re gex[0-9]  # a /x comment", "regex[0-9]"},
		{`a\ b[ #]c`, `a\ b[ #]c`},
		{"[]x ]y", "[]x ]y"},
	}
	for _, tt := range tests {
		if got := stripExtended(tt.in); got != tt.want {
			t.Errorf("stripExtended(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

package diffstat

import (
	"fmt"
	"strconv"
	"strings"
)

// MailWidth is the total width git format-patch uses for the diffstat of
// each patch (MAIL_DEFAULT_WRAP).
const MailWidth = 72

// File is the diffstat entry of one changed path.
type File struct {
	// Path is the file's path (its new path for a rename or copy).
	Path string
	// Added and Deleted count the added and removed lines. For a
	// binary file they are the sizes in bytes of the new and old
	// contents instead (both 0 when the contents did not change, as for
	// a mode change only; git then prints just "Bin").
	Added, Deleted int
	// Created marks a file added by the change (" create mode ...").
	Created bool
	// Removed marks a file deleted by the change (" delete mode ...").
	Removed bool
	// Mode is the octal file mode shown in the summary, e.g. "100644":
	// the new mode of a created file, the old one of a removed file,
	// and the new one for a mode change.
	Mode string
	// OldMode is the previous mode of a file that is neither created nor
	// removed; when it is set and differs from Mode, a
	// " mode change OLD => NEW" line is added to the summary.
	OldMode string
	// OldPath is the source path of a rename or copy; it is empty
	// otherwise.
	OldPath string
	// Copied marks OldPath as the source of a copy rather than a rename.
	Copied bool
	// Similarity is the similarity index, in percent, printed for a
	// rename or copy.
	Similarity int
	// Binary marks a binary file: its line reads "Bin OLD -> NEW bytes"
	// and it does not count towards insertions and deletions.
	Binary bool
}

// Format returns the diffstat as git prints it with the given total width
// (git format-patch uses 72 for per-patch stats: MAIL_DEFAULT_WRAP), files in the given order:
// " path | N +++--\n" lines, the summary line " 3 files changed, 45 insertions(+), 39 deletions(-)\n",
// then the summary of created/deleted files (" create mode 100644 path\n").
// A width of 0 means git's default of 80 columns. Format returns "" when
// files is empty, as git prints nothing then.
func Format(files []File, width int) string {
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	writeStat(&b, files, width)
	b.WriteString(SummaryLine(files))
	b.WriteString(Summary(files))
	return b.String()
}

// Stat returns only the per-file lines of the diffstat, without the
// "N files changed" line and the create/delete summary.
func Stat(files []File, width int) string {
	var b strings.Builder
	writeStat(&b, files, width)
	return b.String()
}

// printName is the name shown in the stat column: the C-quoted path, or
// the "{old => new}" form of a rename or copy.
func (f *File) printName() string {
	if f.OldPath != "" && f.OldPath != f.Path {
		return RenameName(f.OldPath, f.Path)
	}
	return Quote(f.Path)
}

// decimalWidth is the number of decimal digits of n.
func decimalWidth(n int) int {
	w := 1
	for ; n >= 10; n /= 10 {
		w++
	}
	return w
}

// scaleLinear scales it from [0,maxChange] to [0,width], giving at least
// one column to any non-zero change (scale_linear in diff.c).
func scaleLinear(it, width, maxChange int) int {
	if it == 0 {
		return 0
	}
	return 1 + it*(width-1)/maxChange
}

// writeStat writes the per-file lines the way show_stats() in git's
// diff.c lays them out.
func writeStat(b *strings.Builder, files []File, width int) {
	if len(files) == 0 {
		return
	}
	maxChange, maxLen := 0, 0
	numberWidth, binWidth := 0, 0
	names := make([]string, len(files))
	for i := range files {
		f := &files[i]
		names[i] = f.printName()
		if l := len(names[i]); l > maxLen {
			maxLen = l
		}
		if f.Binary {
			// "Bin XXX -> YYY bytes"
			w := 14 + decimalWidth(f.Added) + decimalWidth(f.Deleted)
			binWidth = max(binWidth, w)
			numberWidth = 3
			continue
		}
		maxChange = max(maxChange, f.Added+f.Deleted)
	}

	if width <= 0 {
		width = 80
	}
	numberWidth = max(numberWidth, decimalWidth(maxChange))

	// Guarantee 3/8*16 == 6 columns for the graph and 5/8*16 == 10 for
	// the name.
	if width < 16+6+numberWidth {
		width = 16 + 6 + numberWidth
	}

	graphWidth := maxChange
	if maxChange+4 <= binWidth {
		graphWidth = binWidth - 4
	}
	nameWidth := maxLen

	if nameWidth+numberWidth+6+graphWidth > width {
		if graphWidth > width*3/8-numberWidth-6 {
			graphWidth = width*3/8 - numberWidth - 6
			if graphWidth < 6 {
				graphWidth = 6
			}
		}
		if nameWidth > width-numberWidth-6-graphWidth {
			nameWidth = width - numberWidth - 6 - graphWidth
		} else {
			graphWidth = width - numberWidth - 6 - nameWidth
		}
	}

	for i := range files {
		f := &files[i]
		name := names[i]
		prefix := ""
		l := nameWidth
		if nameWidth < len(name) {
			prefix = "..."
			l -= 3
			if l < 0 {
				l = 0
			}
			name = name[len(name)-l:]
			if j := strings.IndexByte(name, '/'); j >= 0 {
				name = name[j:]
			}
		}
		padding := max(l-len(name), 0)

		b.WriteByte(' ')
		b.WriteString(prefix)
		b.WriteString(name)
		b.WriteString(strings.Repeat(" ", padding))
		b.WriteString(" | ")

		if f.Binary {
			fmt.Fprintf(b, "%*s", numberWidth, "Bin")
			if f.Added != 0 || f.Deleted != 0 {
				fmt.Fprintf(b, " %d -> %d bytes", f.Deleted, f.Added)
			}
			b.WriteByte('\n')
			continue
		}

		add, del := f.Added, f.Deleted
		if graphWidth <= maxChange {
			total := scaleLinear(add+del, graphWidth, maxChange)
			if total < 2 && add != 0 && del != 0 {
				total = 2
			}
			if add < del {
				add = scaleLinear(add, graphWidth, maxChange)
				del = total - add
			} else {
				del = scaleLinear(del, graphWidth, maxChange)
				add = total - del
			}
		}
		fmt.Fprintf(b, "%*d", numberWidth, f.Added+f.Deleted)
		if f.Added+f.Deleted != 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.Repeat("+", add))
		b.WriteString(strings.Repeat("-", del))
		b.WriteByte('\n')
	}
}

// SummaryLine returns git's " N files changed, I insertions(+), D
// deletions(-)\n" line for files. Binary files count as changed files
// but not towards insertions and deletions. Zero insertions or
// deletions are left out unless both are zero.
func SummaryLine(files []File) string {
	if len(files) == 0 {
		return " 0 files changed\n"
	}
	ins, del := 0, 0
	for _, f := range files {
		if !f.Binary {
			ins += f.Added
			del += f.Deleted
		}
	}
	var b strings.Builder
	if len(files) == 1 {
		b.WriteString(" 1 file changed")
	} else {
		fmt.Fprintf(&b, " %d files changed", len(files))
	}
	if ins != 0 || del == 0 {
		if ins == 1 {
			b.WriteString(", 1 insertion(+)")
		} else {
			fmt.Fprintf(&b, ", %d insertions(+)", ins)
		}
	}
	if del != 0 || ins == 0 {
		if del == 1 {
			b.WriteString(", 1 deletion(-)")
		} else {
			fmt.Fprintf(&b, ", %d deletions(-)", del)
		}
	}
	b.WriteByte('\n')
	return b.String()
}

// Summary returns the lines git's --summary prints for files, in order:
// " create mode 100644 path", " delete mode 100644 path",
// " rename old => new (NN%)", " copy old => new (NN%)" and
// " mode change 100644 => 100755 path".
func Summary(files []File) string {
	var b strings.Builder
	for _, f := range files {
		switch {
		case f.Removed:
			writeModeName(&b, "delete", f.Mode, f.Path)
		case f.Created:
			writeModeName(&b, "create", f.Mode, f.Path)
		case f.OldPath != "" && f.OldPath != f.Path:
			verb := "rename"
			if f.Copied {
				verb = "copy"
			}
			fmt.Fprintf(&b, " %s %s (%d%%)\n", verb, RenameName(f.OldPath, f.Path), f.Similarity)
			writeModeChange(&b, f, false)
		default:
			writeModeChange(&b, f, true)
		}
	}
	return b.String()
}

func writeModeName(b *strings.Builder, verb, mode, path string) {
	if mode != "" && strings.Trim(mode, "0") != "" {
		fmt.Fprintf(b, " %s mode %s %s\n", verb, mode6(mode), Quote(path))
	} else {
		fmt.Fprintf(b, " %s %s\n", verb, Quote(path))
	}
}

func writeModeChange(b *strings.Builder, f File, withName bool) {
	if f.OldMode == "" || f.Mode == "" || mode6(f.OldMode) == mode6(f.Mode) {
		return
	}
	if strings.Trim(f.OldMode, "0") == "" || strings.Trim(f.Mode, "0") == "" {
		return
	}
	fmt.Fprintf(b, " mode change %s => %s", mode6(f.OldMode), mode6(f.Mode))
	if withName {
		b.WriteString(" " + Quote(f.Path))
	}
	b.WriteByte('\n')
}

// mode6 formats an octal mode with at least six digits, as git's %06o.
func mode6(mode string) string {
	if v, err := strconv.ParseUint(mode, 8, 32); err == nil {
		return fmt.Sprintf("%06o", v)
	}
	return mode
}

// Quote returns path as git prints it with core.quotePath=true (the
// default): unchanged if it only has printable ASCII other than '"' and
// '\\', otherwise C-quoted in double quotes with octal escapes for
// other bytes.
func Quote(path string) string {
	if !needsQuote(path) {
		return path
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&b, "\\%03o", c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func needsQuote(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return true
		}
	}
	return false
}

// RenameName returns git's compact name for a rename or copy from a to b:
// "dir/{old => new}/file" when they share a leading directory part or a
// trailing part starting at a '/', "a => b" otherwise (pprint_rename).
func RenameName(a, b string) string {
	if needsQuote(a) || needsQuote(b) {
		return Quote(a) + " => " + Quote(b)
	}
	// Common prefix, up to and including its last '/'.
	pfx := 0
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '/' {
			pfx = i + 1
		}
	}
	// Common suffix, starting at a '/'. With a prefix, the scan may
	// run one byte into it to see that prefix's trailing slash.
	sfx := 0
	adj := 0
	if pfx > 0 {
		adj = 1
	}
	ia, ib := len(a), len(b)
	// Index len(a) stands for the terminating NUL of C strings, which
	// is equal in both.
	at := func(s string, i int) byte {
		if i == len(s) {
			return 0
		}
		return s[i]
	}
	for pfx-adj <= ia && pfx-adj <= ib && at(a, ia) == at(b, ib) {
		if at(a, ia) == '/' {
			sfx = len(a) - ia
		}
		ia--
		ib--
		if ia < 0 || ib < 0 {
			break
		}
	}
	amid := max(len(a)-pfx-sfx, 0)
	bmid := max(len(b)-pfx-sfx, 0)

	var s strings.Builder
	if pfx+sfx > 0 {
		s.WriteString(a[:pfx])
		s.WriteByte('{')
	}
	s.WriteString(a[pfx : pfx+amid])
	s.WriteString(" => ")
	s.WriteString(b[pfx : pfx+bmid])
	if pfx+sfx > 0 {
		s.WriteByte('}')
		s.WriteString(a[len(a)-sfx:])
	}
	return s.String()
}

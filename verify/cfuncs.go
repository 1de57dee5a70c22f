package verify

import (
	"regexp"
	"strings"
)

// cfunc is a function definition found in the lines of a hunk.
type cfunc struct {
	name   string
	static bool
	file   string
	head   Line   // the line with the name
	decl   string // the declaration up to the closing parenthesis
	body   []Line // from the opening brace to the closing one
	global bool   // not static
}

// funcHead matches the first line of a function definition in kernel
// style: at column 0, a return type and the name, the parameters open.
var funcHead = regexp.MustCompile(`^([A-Za-z_][\w \t\*]*?[\s\*])([A-Za-z_]\w*)\s*\(`)

// funcsIn finds the complete function definitions in a list of numbered
// lines (the added or removed lines of a file), within runs of consecutive
// line numbers.
func funcsIn(file string, lines []Line) []cfunc {
	var out []cfunc
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		m := funcHead.FindStringSubmatch(l.Text)
		if m == nil || strings.HasPrefix(l.Text, "#") || strings.Contains(l.Text, "=") || strings.HasSuffix(strings.TrimSpace(l.Text), ";") {
			continue
		}
		typ := m[1]
		if strings.HasPrefix(strings.TrimSpace(typ), "return") || strings.HasPrefix(typ, "typedef") {
			continue
		}
		// The declaration ends at the line with the closing parenthesis,
		// the body starts at a "{" line right after it.
		decl := l.Text
		j := i
		for !strings.Contains(lines[j].Text, ")") {
			if j+1 >= len(lines) || lines[j+1].N != lines[j].N+1 {
				break
			}
			j++
			decl += " " + strings.TrimSpace(lines[j].Text)
		}
		if j+1 >= len(lines) || lines[j+1].N != lines[j].N+1 || lines[j+1].Text != "{" {
			continue
		}
		k := j + 1
		for k < len(lines) && lines[k].Text != "}" {
			if k+1 < len(lines) && lines[k+1].N != lines[k].N+1 {
				k = len(lines) // the run ends before the body does
				break
			}
			k++
		}
		if k >= len(lines) {
			continue
		}
		static := strings.Contains(" "+typ, " static ") || strings.HasPrefix(typ, "static")
		out = append(out, cfunc{name: m[2], static: static, global: !static, file: file, head: l,
			decl: decl, body: append([]Line(nil), lines[j+1:k+1]...)})
		i = k
	}
	return out
}

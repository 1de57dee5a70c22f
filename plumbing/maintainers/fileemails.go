package maintainers

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// perlS is Perl's \s on a character string, for package regexp.
const perlS = `[\t\n\v\f\r \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]`

// The patterns of maintainers_in_file, for the addresses in .yaml files.
var (
	// possibleAddress is maintainers_in_file's pattern for a name and
	// address written in a file.
	possibleAddress = regexp.MustCompile(`[\p{L}"' ,.+-]*` + perlS + `*,*` + perlS + `*[(<{]?[A-Za-z0-9_.+-]+@[A-Za-z0-9.-]+\.[A-Za-z0-9]+[)>}]?`)
	// bracketedAddress is clean_file_emails' first substitution.
	bracketedAddress = regexp.MustCompile(`[(<{]?([A-Za-z0-9_.+-]+@[A-Za-z0-9.-]+)[)>}]?`)
)

// FileEmails returns the addresses get_maintainer.pl takes from the text
// of a file it is asked about (maintainers_in_file with clean_file_emails):
// it does so for every .yaml file (device tree bindings name their
// maintainers in them), and for no other file unless asked to with
// --file-emails. The names are cut to their last two or three words as
// the script does. text must be UTF-8, as the script decodes it.
func FileEmails(text string) []string {
	var out []string
	for _, email := range possibleAddress.FindAllString(text, -1) {
		email = bracketedAddress.ReplaceAllString(email, "<$1>")
		name, addr := parseEmail(email)
		if len(name) >= 2 && name[0] == '"' && name[len(name)-1] == '"' {
			name = name[1 : len(name)-1]
		}
		var words []string
		for _, w := range perlSplit(name, func(r rune) bool {
			return !unicode.IsLetter(r) && !strings.ContainsRune(`',.+-`, r)
		}) {
			if utf8.RuneCountInString(w) == 1 && strings.ContainsAny(w, `',.+-`) {
				continue
			}
			words = append(words, w)
		}
		if n := len(words); n > 2 {
			first, middle, last := words[n-3], words[n-2], words[n-1]
			initial := func(w string) bool {
				return utf8.RuneCountInString(w) == 2 && strings.HasSuffix(w, ".")
			}
			firstLetter := utf8.RuneCountInString(first) == 1 && unicode.IsLetter([]rune(first)[0])
			if firstLetter || initial(first) || utf8.RuneCountInString(middle) == 1 || initial(middle) {
				name = first + " " + middle + " " + last
			} else {
				name = middle + " " + last
			}
		} else {
			name = strings.Join(words, " ")
		}
		if strings.HasSuffix(name, ",") || strings.HasSuffix(name, ".") {
			name = name[:len(name)-1]
		}
		if strings.HasPrefix(name, ",") || strings.HasPrefix(name, ".") {
			name = name[1:]
		}
		out = append(out, formatEmail(name, addr))
	}
	return out
}

// perlSplit is Perl's split with a one-character pattern: empty fields
// between separators and a leading empty field are kept, trailing empty
// fields dropped.
func perlSplit(s string, sep func(rune) bool) []string {
	var fields []string
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if sep(r) {
			fields = append(fields, s[start:i])
			start = i + size
		}
		i += size
	}
	fields = append(fields, s[start:])
	for len(fields) > 0 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	return fields
}

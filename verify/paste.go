package verify

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// pastedNames returns the identifiers a file makes with its own
// function-like macros' token pasting, at each invocation of them in the
// file: BBRv3's
//
//	#define bbr_param(sk,name)	(bbr_ ## name)
//	...
//	if (bbr_param(sk, tso_rtt_shift)) {
//
// uses the static const bbr_tso_rtt_shift, which no line names whole.
// Where verify reads the file with its prelude, cc/v4 does not expand the
// file's macros in code it could not read, and the name is a use all the
// same. code is the file's code (cunit.CodeOnly). Pastes of a parameter
// with identifier text (name ## _suffix, prefix_ ## name, chains of them)
// are made; an argument that is not an identifier makes nothing.
func pastedNames(code []byte) map[string]bool {
	out := map[string]bool{}
	macros, defs := pasteMacros(code)
	if len(macros) == 0 {
		return out
	}
	// one pass over the code: every identifier followed by "(", kept
	// when it names such a macro (not at its own #define)
	for _, loc := range callRE().FindAllSubmatchIndex(code, -1) {
		ms := macros[string(code[loc[2]:loc[3]])]
		if len(ms) == 0 || defs[loc[2]] {
			continue
		}
		args, ok := macroArgs(code[loc[1]:])
		if !ok {
			continue
		}
		for _, m := range ms {
			if len(args) != len(m.params) {
				continue
			}
			for _, chain := range m.chains {
				if id, ok := chain.paste(args); ok {
					out[id] = true
				}
			}
		}
	}
	return out
}

// pasteMacro is a function-like macro whose replacement pastes a
// parameter.
type pasteMacro struct {
	params []string
	chains []pasteChain
}

// pasteChain is one run of tokens joined by ##: each part a literal
// identifier fragment or a parameter (by index).
type pasteChain []pastePart

type pastePart struct {
	text  string
	param int // -1: text is literal
}

// paste makes the chain's identifier from the invocation's arguments.
func (c pasteChain) paste(args []string) (string, bool) {
	var b strings.Builder
	for _, p := range c {
		if p.param < 0 {
			b.WriteString(p.text)
			continue
		}
		a := strings.TrimSpace(args[p.param])
		if !pasteWordRE().MatchString(a) {
			return "", false
		}
		b.WriteString(a)
	}
	id := b.String()
	return id, pasteWordRE().MatchString(id)
}

// pasteWordRE is a whole C identifier, or a fragment of one (a number-led
// fragment such as the 64 of irq_ ## 64 is pasted too).
var pasteWordRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\w+$`) })

// maxInvocation bounds the text of one macro invocation read.
const maxInvocation = 4 << 10

// callRE is an identifier followed by an opening parenthesis.
var callRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b([A-Za-z_]\w*)\s*\(`) })

// pasteDefineRE is a function-like #define with its parameters and the
// rest of its first line.
var pasteDefineRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)]*)\)(.*)$`)
})

// pasteTokenRE splits a replacement into identifiers, ## and the rest.
var pasteTokenRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\w+|##|\S`) })

// pasteMacros finds the file's function-like macros that paste a
// parameter, by name (a name defined twice, under #if and #else, has
// both), and the offsets of the names their #defines define.
func pasteMacros(code []byte) (map[string][]pasteMacro, map[int]bool) {
	out, defs := map[string][]pasteMacro{}, map[int]bool{}
	if !bytes.Contains(code, []byte("##")) {
		return out, defs
	}
	for _, m := range pasteDefineRE().FindAllSubmatchIndex(code, -1) {
		name := string(code[m[2]:m[3]])
		defs[m[2]] = true
		var params []string
		for _, p := range strings.Split(string(code[m[4]:m[5]]), ",") {
			params = append(params, strings.TrimSpace(p))
		}
		body := defineBody(code, m[6])
		if !strings.Contains(body, "##") {
			continue
		}
		index := map[string]int{}
		for i, p := range params {
			index[p] = i
		}
		toks := pasteTokenRE().FindAllString(body, -1)
		var chains []pasteChain
		for i := 0; i < len(toks); i++ {
			if toks[i] == "##" || !pasteWordRE().MatchString(toks[i]) {
				continue
			}
			// the longest run tok ## tok ## ... from here
			j := i
			for j+2 < len(toks) && toks[j+1] == "##" && pasteWordRE().MatchString(toks[j+2]) {
				j += 2
			}
			if j == i {
				continue
			}
			var chain pasteChain
			withParam := false
			for k := i; k <= j; k += 2 {
				if n, ok := index[toks[k]]; ok {
					chain = append(chain, pastePart{param: n})
					withParam = true
				} else {
					chain = append(chain, pastePart{text: toks[k], param: -1})
				}
			}
			if withParam {
				chains = append(chains, chain)
			}
			i = j
		}
		if len(chains) > 0 {
			out[name] = append(out[name], pasteMacro{params: params, chains: chains})
		}
	}
	return out, defs
}

// defineBody returns a #define's replacement from offset from (after its
// parameters) to the end of its logical line, continuations joined.
func defineBody(code []byte, from int) string {
	var b strings.Builder
	for i := from; i < len(code); {
		j := bytes.IndexByte(code[i:], '\n')
		if j < 0 {
			j = len(code) - i
		}
		line := code[i : i+j]
		cont := bytes.HasSuffix(bytes.TrimRight(line, " \t\r"), []byte(`\`))
		if cont {
			line = bytes.TrimSuffix(bytes.TrimRight(line, " \t\r"), []byte(`\`))
		}
		b.Write(line)
		b.WriteByte(' ')
		if !cont {
			break
		}
		i += j + 1
	}
	return b.String()
}

// macroArgs splits the arguments of an invocation whose opening
// parenthesis has been read: at the commas outside nested parentheses,
// brackets and braces, up to the closing parenthesis, within
// maxInvocation bytes (so that unclosed invocations cost no more than
// that each).
func macroArgs(rest []byte) ([]string, bool) {
	depth, start := 0, 0
	var args []string
	if len(rest) > maxInvocation {
		rest = rest[:maxInvocation]
	}
	for i, ch := range rest {
		switch ch {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				if ch != ')' {
					return nil, false
				}
				return append(args, string(rest[start:i])), true
			}
			depth--
		case ',':
			if depth == 0 {
				args = append(args, string(rest[start:i]))
				start = i + 1
			}
		case ';':
			if depth == 0 {
				return nil, false
			}
		}
	}
	return nil, false
}

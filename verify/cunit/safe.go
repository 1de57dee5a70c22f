package cunit

import (
	"fmt"
	"runtime"
	"strings"

	"modernc.org/cc/v4"
)

// ccParse is cc.Parse that returns a panic of cc/v4 (a bug of the C
// reader on valid C, as its parser's nil dereference in checkTypeName on
// 6.1's net/ipv4/tcp_output.c) as an error: the unit is then one C_EVAL
// finding, and the other units and rules are still checked.
func ccParse(cfg *cc.Config, sources []cc.Source) (ast *cc.AST, err error) {
	defer recoverCC("parse", &err)
	return cc.Parse(cfg, sources)
}

// ccTranslate is cc.Translate with a panic returned as an error, as
// ccParse.
func ccTranslate(cfg *cc.Config, sources []cc.Source) (ast *cc.AST, err error) {
	defer recoverCC("translate", &err)
	return cc.Translate(cfg, sources)
}

// recoverCC turns a panic of cc/v4 into *err, naming where in cc/v4 it
// happened so that it can be reported there.
func recoverCC(op string, err *error) {
	r := recover()
	if r == nil {
		return
	}
	*err = fmt.Errorf("modernc.org/cc/v4 failed to %s it (a bug of the C reader, not of the code: %v at %s)", op, r, panicSite())
}

// panicSite returns the cc/v4 function where the panic began: the first
// frame below the innermost of the runtime's panic frames (cc/v4's
// deferred functions re-raise it).
func panicSite() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	site, inRuntime := "cc/v4", false
	for {
		f, more := frames.Next()
		switch {
		case strings.HasPrefix(f.Function, "runtime."):
			inRuntime = true
		case inRuntime:
			site, inRuntime = strings.TrimPrefix(f.Function, "modernc.org/cc/v4."), false
		}
		if !more {
			return site
		}
	}
}

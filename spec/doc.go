// Package spec reads and writes a series description: the revisions of a
// patch series, their patches (subject, author, commit message, notes,
// edits to files of the kernel tree) and the templates of the files the
// series creates.
//
// # The model: declared once, guarded by revision
//
// Each revision is written as what changed from the one before. What a
// patch does is declared once, in the folder of the first revision that
// has it, and what differs between revisions is guarded by the version
// inside that one declaration. A revision's folder holds only what belongs
// to that revision: its header and cover letter, its order (with its folds;
// a drop is a patch the order no longer lists), the patches it declares
// first, and its notes.
//
//	files/<path>.tmpl   one template per file the series creates, all revisions
//	v11/series          the revision's header fields, a blank line, the cover letter
//	v11/order           its patches in order, one id a line; "a + b" folds b into a
//	v11/<id>.patch      a patch declared here first: header, message, edits
//	v11/<id>.notes      the notes below "---" of patch <id> in this revision
//	v12/series, v12/order, v12/used-bit.patch, v12/<id>.notes ...
//	facts/<name>.tmpl   facts about the series by patch id and revision (see Facts)
//
// The ids name patches everywhere (order, templates, notes); numbers are
// the order's and change from revision to revision. Every file of a
// revision's folder must be one of these four kinds, every declaration
// must be listed by some order, every id a guard names must be listed by
// some order and every version a guard compares with must be a revision
// the spec has: Load refuses anything else, naming the file and line.
//
// # Two examples: v13 and v14
//
// v13 changed code but not the shape of the series: the timestamp became a
// cookie. Its folder is v13/series (the cover letter with "Changes since
// v12"), v13/order (the same fourteen ids as v12) and a .notes file for each
// patch whose posting carried notes. The code change is a guard in the
// templates,
//
//	{{if lt .Version 13}}
//		u64				timestamp;
//	{{else}}
//		u64				id;
//	{{end}}
//
// and where a patch's edits to existing files changed, the same guard in
// that patch's one declaration (v11/deferred.patch).
//
// v14 changed the shape. Its order is
//
//	user-api + fp          # the API patch and frame pointer support, one patch
//	faultable
//	cache
//	deferred
//	nmi-safe
//	bitmask + clear-mask   # clearing the mask on exit, folded into the bitmask patch
//	completed-mask         # new: declared in v14/completed-mask.patch
//	used-bit
//	srcu
//	task-exit
//	x86-fp
//	x86-compat-defer       # new, and compat-fp and x86-compat-fp are dropped
//
// A fold is one line: the patch keeps the first id's declaration (its
// author, and its subject guarded by {{if lt .Version 14}}), gets the
// edits of both in order, and a guard on either id ({{if since "fp"}}) is
// true from the folded patch on. A drop is the line that is no longer
// there: guards on a dropped id are false for since and between and true
// for before, so templates render v14 as if compat unwinding never
// existed. A new patch is its declaration in the folder of the revision
// that adds it and one line of the order.
//
// kpatch spec -v N writes one revision flattened, every guard resolved, to
// read it or diff it against another.
//
// # Stacked series
//
// A series posted on its own on top of a revision of the main one, as the
// x86 patches were after v15, is a folder NAME-vN (x86-v2) whose series
// header names the revision it applies on, as b4's prerequisites do:
//
//	Prerequisite: v16
//
// Its order lists its own patches (declared anywhere, once: x86-v2 reuses
// x86-fp and x86-compat-defer; the patches no revision of the main series
// has are declared in the stacked series' own folder, as
// x86-6.19-v1/perf-deferred.patch). Spec.Stack finds it; its Patches start with
// the prerequisite's, Own of them, and its guards see the prerequisite's
// version, so the templates render the prerequisite and then the stacked
// patches on it.
//
// # Revision header
//
// The "series" file starts with "Key: value" lines: Version, Base (the kernel
// revision the revision was posted against), Subject (the cover letter's),
// From (the sender), Date (of the cover letter; patch N is dated N seconds
// later), Message-Id-Domain, Change-Id, Message-Ids (the Message-Ids of
// the revision as posted, the cover letter's first: kpatch send records
// them, with the Date and Base it was sent with; see PostedID), To and Cc
// (recipients named by the series, besides those found in MAINTAINERS); the self-test cases a
// revision adds are facts (facts/selftest.tmpl's extra-cases, which a
// stacked series inherits), and a Selftest-Cases line, which said them
// once, is refused with that advice. Everything after the first
// blank line is the cover letter text, ending before the shortlog and
// diffstat that kpatch adds.
//
// # Patch declarations
//
// A declaration is a template (see Templates; . is the revision, so
// {{.Version}} and its comparisons are the guards) that renders, for each
// revision listing it, to a mail-like text: "Author:" and "Subject:" header
// lines (and "Date:", the author date of a patch taken from a commit, as
// git writes it; without it a patch is dated after its cover letter),
// a blank line, the commit message with its trailers, then
// optionally a line "=== edits" followed by the edits to existing files.
// Any other line starting with "===" is refused (a mistyped "=== edit"
// would otherwise become commit message text), and so is a "---" line: the
// notes below "---" belong to one revision and live in vN/<id>.notes.
// Lines that hold only a guard leave nothing in the text, and every error
// names the line of the declaration.
//
// # Templates
//
// Templates use text/template with these functions, and a guard naming an
// unknown patch id or revision fails when the spec is loaded:
//
//	{{created "id"}}        the file exists from patch "id" on (first line)
//	{{if since "id"}}       true once patch "id" is applied
//	{{if before "id"}}      true until patch "id" is applied
//	{{if between "a" "b"}}  true from patch "a" until patch "b" is applied
//	{{if lt .Version 13}}   true for revisions before v13 (lt, le, gt, ge, eq, ne)
//	{{.Step}}, {{.Patch}}   the number and id of the last applied patch
//	{{.Stack}}, {{.StackVersion}}
//	                        the stacked series rendered and its own revision
//	                        ("x86", 2; "" and 0 for the main series, whose
//	                        version a stacked series' .Version is): the
//	                        guard of a trailer given to a stacked series
//
// A line holding nothing but one control action leaves nothing in the
// output; errors name the line of the template file.
//
// Templates are parsed once, when the spec is loaded, and run by
// text/template alone; a render is kept by revision and by which of the
// patches its guards name are applied (a created file changes only with
// them), so gen renders each file once per change, not once per patch.
//
// # Facts
//
// facts/<name>.tmpl are templates like those of created files (the same
// guards, checked the same way) that render, after a patch of a revision,
// to "key: value" lines: what the series says about itself beyond its
// code, by patch id and revision, so that no Go code is keyed by a
// revision's patch numbers. Revision.Facts reads them. The built-in series
// has facts/walker.tmpl (what package unwind's walker models of an x86_64
// kernel after the patch), facts/configs.tmpl (the symbols each build
// configuration must have after the last patch built) and
// facts/selftest.tmpl (what the QEMU self-test expects of the kernel: a
// timestamp or a cookie, unwind_deferred_request()'s return values, the
// reserved mask bits, the extra cases to run) and facts/base.tmpl (what a
// revision uses of its base tree that older bases lack, and the stand-in
// kpatch test defines on such a base: v14's srcu_read_lock_lite(), Linux
// v6.13, on Debian's 6.12; package buildtest/standin). A stacked series' facts are
// rendered with its prerequisite's version, after all its patches.
//
// # Edits
//
// An edit is a line "@ PATH: OP ARGS..." followed by the text it inserts,
// one "+"-prefixed line per line. Each edit is placed by what it attaches
// to, never by line number; see package hooks for the operations.
//
// # Verify rules
//
// The file verify-rules says what kpatch verify checks for the series
// beyond the kernel's rules (see VerifyRules); Load reads it into
// Spec.VerifyRules.
//
// # Writing
//
// Load is the one reader of the format and Writer its one writer: a new
// revision's folder, a header field, a cover letter's "Changes since"
// section, a patch's notes, a trailer added to a declaration for one
// revision on, a declaration's message, a created file's template. kpatch
// revision new, kpatch trailers and the weave tools change a spec copy
// only through it; it writes every change at once, and only when the spec
// loads with them.
package spec

package gitapply

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Tree is what a patch is applied to: the working tree git apply reads
// (or the index, for git apply --index; they hold the same here).
type Tree interface {
	// Mode returns the git mode of the file at path (0o100644, 0o100755,
	// 0o120000 for a symlink), or 0 when there is no file there (a
	// directory is no file).
	Mode(path string) uint32
	// ReadFile returns the content of the file at path (a symlink's
	// target).
	ReadFile(path string) ([]byte, error)
}

// Options says which git apply runs.
type Options struct {
	// Reject is --reject: a hunk that does not apply is left out and the
	// others applied; without it a file with such a hunk is refused, and
	// then nothing of the patch is applied.
	Reject bool
	// Reverse is -R: the patch is applied backwards.
	Reverse bool
	// Check is --check: nothing is applied, the result says whether it
	// would (Result.Changes is empty).
	Check bool
	// Index says what git apply --index says (as git am runs it): "does
	// not exist in index" and "already exists in index" where git apply
	// on the working tree says "No such file or directory" and "already
	// exists in working directory".
	Index bool
}

// Result is what git apply did with a patch.
type Result struct {
	// Files are the patch's files in its order (Reverse does not change
	// it); a file after an Err is not checked (Checked false).
	Files []*FileResult
	// Err stops the whole patch before anything is applied: git's words
	// for a path it refuses ("invalid path '../x.c'"). Nothing is applied.
	Err error
	// AlreadyApplied says that the patch does not apply but that the tree
	// already has it: git apply -R --check takes it (set by Apply without
	// Reverse).
	AlreadyApplied bool
	// Fatal is the file at which git died writing: with Reject, a
	// deletion whose hunks git rejected on a file they left empty
	// ("fatal: internal error"); a file to create under a path that is a
	// file ("Not a directory") or where a directory of files is
	// ("Directory not empty"), which git finds only when it writes. The
	// removals and the files before it were written, not those after it
	// (Changes says so).
	Fatal *FileResult

	opt     Options
	log     []logLine
	wrote   bool        // the write phase ran (Changes holds what it wrote)
	current *FileResult // the file being checked, for log
}

// FileResult is one file of a patch.
type FileResult struct {
	Diff    *gitdiff.File // the file's diff, as given
	Checked bool          // git got to it (not after a patch-wide Err)
	// OldName and NewName are the paths it reads and writes, "" for none
	// (a creation has no old name, a deletion no new one); swapped by
	// Reverse.
	OldName, NewName string
	// Err is why git refuses the file, in its words without "error: "
	// ("kernel/x.c: does not exist in index", "removal patch leaves file
	// contents"), or why git could not write it (the Fatal file:
	// "unable to write file 'a.c/x.c' mode 100644: Not a directory");
	// nil when it applies (with Reject, perhaps with some hunks left out).
	Err error
	// Hunks are the text hunks in order; a binary patch has none.
	Hunks []*Hunk
	// Content and Mode are the file after the patch when Err is nil
	// (Content nil and Mode 0 for a deletion); Old is what the patch was
	// applied to.
	Content, Old []byte
	Mode         uint32
	Binary       bool
	// Warnings are git's ("x.c has type 100644, expected 100755").
	Warnings []string
	p        *filePatch
	log      []logLine
}

// Hunk is one hunk of a file.
type Hunk struct {
	// Applied says whether git applied it; Err is git's words when not
	// ("patch failed: kernel/x.c:120").
	Applied bool
	Err     error
	// Line is the line (1-based) at which its old lines were found, in
	// the file as the hunks before it left it, and Offset how far that is
	// from where its header puts it (git -v: "Hunk #2 succeeded at 124
	// (offset 4 lines).").
	Line, Offset int
	// OldLines are the line numbers, in the file before the patch, of the
	// lines it expects (context and removed, in its order); NewLines those,
	// in the file after the patch, of the lines it leaves (context and
	// added).
	OldLines, NewLines []int
}

// OK reports whether every file and hunk applies.
func (r *Result) OK() bool {
	if r.Err != nil || r.Fatal != nil {
		return false
	}
	for _, f := range r.Files {
		if !f.Checked || f.Err != nil {
			return false
		}
		for _, h := range f.Hunks {
			if !h.Applied {
				return false
			}
		}
	}
	return true
}

// Change is one path a patch writes: its content and mode, or its removal.
type Change struct {
	Path    string
	Remove  bool
	Content []byte
	Mode    uint32
}

// Changes returns what git apply writes, in its order: first the paths it
// removes (deletions, and the old names of renames and changed files),
// then those it writes. It is empty when the patch does not apply (with
// Reject: for the files refused whole) and with Check.
func (r *Result) Changes() []Change {
	if !r.wrote {
		return nil
	}
	var out []Change
	for _, f := range r.order() {
		if p := f.p; p != nil && !p.rejected && p.isNew <= 0 && !p.isCopy {
			out = append(out, Change{Path: p.oldName, Remove: true})
		}
	}
	for _, f := range r.order() {
		if f == r.Fatal {
			break
		}
		if p := f.p; p != nil && !p.rejected && p.isDelete <= 0 {
			out = append(out, Change{Path: p.newName, Content: p.result, Mode: p.newMode})
		}
	}
	return out
}

// order returns the files in the order git handled them (reversed by
// Reverse).
func (r *Result) order() []*FileResult {
	if !r.opt.Reverse {
		return r.Files
	}
	out := make([]*FileResult, len(r.Files))
	for i, f := range r.Files {
		out[len(r.Files)-1-i] = f
	}
	return out
}

// logLine is one message git prints; verbose ones only with -v (and
// --reject, which implies it).
type logLine struct {
	text    string
	verbose bool
	file    *FileResult // what it is about, if a file
}

// Log returns what git apply prints on standard error, line by line
// (without whitespace warnings: as --whitespace=nowarn), as git apply -v
// prints it when verbose (which --reject implies), else without its
// verbose lines.
func (r *Result) Log(verbose bool) []string {
	var out []string
	for _, l := range r.log {
		if !l.verbose || verbose {
			out = append(out, strings.Split(l.text, "\n")...)
		}
	}
	return out
}

// Errors returns the errors git printed about f, in its words ("error:
// patch failed: x.c:12"; not the verbose "error: while searching for:").
func (f *FileResult) Errors() []string {
	var out []string
	for _, l := range f.log {
		if !l.verbose && strings.HasPrefix(l.text, "error: ") {
			out = append(out, l.text)
		}
	}
	return out
}

// say records a line git prints as it is.
func (r *Result) say(verbose bool, format string, args ...any) {
	r.log = append(r.log, logLine{fmt.Sprintf(format, args...), verbose, r.current})
}

// report records an error or a warning as git's vreportf prints it: after
// its prefix, cut at a NUL and to 4095 bytes, control characters but tab
// and newline shown as '?'.
func (r *Result) report(verbose bool, prefix, msg string) {
	if i := strings.IndexByte(msg, 0); i >= 0 {
		msg = msg[:i]
	}
	b := []byte(prefix + msg)
	if len(b) > 4095 {
		b = b[:4095]
	}
	for i := len(prefix); i < len(b); i++ {
		if c := b[i]; (c < 0x20 || c == 0x7f) && c != '\t' && c != '\n' {
			b[i] = '?'
		}
	}
	r.log = append(r.log, logLine{string(b), verbose, r.current})
	if r.current != nil {
		r.current.log = append(r.current.log, r.log[len(r.log)-1])
	}
}

// errAbort marks an error that stops the whole patch (git's -128).
var errAbort = errors.New("abort")

// Apply applies the files of one patch (one mail's, in its order) to tree
// as git apply does with opt: each file is checked and applied in turn to
// what the files before it in the patch left; nothing is written to tree
// (Result.Changes says what git would write).
func Apply(tree Tree, files []*gitdiff.File, opt Options) *Result {
	a := &applier{tree: tree, opt: opt, res: &Result{opt: opt}, table: map[string]*tableEntry{}}
	var list []*filePatch
	for _, f := range files {
		fr := &FileResult{Diff: f}
		a.res.Files = append(a.res.Files, fr)
		fr.p = newFilePatch(f, fr, opt.Reverse)
		list = append(list, fr.p)
	}
	if opt.Reverse { // git apply -R puts each patch before the ones read before it
		for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
			list[i], list[j] = list[j], list[i]
		}
	}
	a.run(list)
	if !opt.Reverse && a.res.Err == nil && !a.res.OK() {
		a.res.AlreadyApplied = Apply(tree, files, Options{Reverse: true, Check: true, Index: opt.Index}).OK()
	}
	return a.res
}

// CheckPaths returns git's error for the first path of files that git
// refuses ("invalid path '../x.c'") and the index of its file, or nil:
// what Apply says of paths without a tree to apply the patch to. (git
// checks the names a file patch reads and writes: not the source of a
// copy, not what a deletion would write.)
func CheckPaths(files []*gitdiff.File) (int, error) {
	for i, f := range files {
		p := newFilePatch(f, &FileResult{Diff: f}, false)
		for _, c := range p.unsafePaths() {
			if c.name != "" && !ValidPath(c.name, c.mode) {
				return i, fmt.Errorf("invalid path '%s'", c.name)
			}
		}
	}
	return -1, nil
}

// namedPath is a path a file patch touches and its mode.
type namedPath struct {
	name string
	mode uint32
}

// unsafePaths are the paths git's check_unsafe_path checks. (git tests
// is_delete as C does: a diff without git's headers that empties its file
// leaves it -1, true.)
func (p *filePatch) unsafePaths() []namedPath {
	var out []namedPath
	if p.isDelete != 0 || p.isNew == 0 && !p.isCopy {
		out = append(out, namedPath{p.oldName, p.oldMode})
	}
	if p.isDelete == 0 {
		out = append(out, namedPath{p.newName, p.newMode})
	}
	return out
}

// filePatch is one file of a patch as git apply's struct patch holds it.
type filePatch struct {
	res              *FileResult
	oldName, newName string
	isNew, isDelete  int // -1: not known yet (a diff without git's headers)
	isRename, isCopy bool
	oldMode, newMode uint32
	oldOID, newOID   string
	frags            []*fragment
	binary           bool
	binFrag          *gitdiff.BinaryFragment
	reverse          bool
	result           []byte
	rejected         bool
}

func newFilePatch(f *gitdiff.File, fr *FileResult, reverse bool) *filePatch {
	p := &filePatch{res: fr, oldName: f.OldName, newName: f.NewName,
		isRename: f.IsRename, isCopy: f.IsCopy, oldMode: uint32(f.OldMode), newMode: uint32(f.NewMode),
		oldOID: f.OldOIDPrefix, newOID: f.NewOIDPrefix, binary: f.IsBinary, binFrag: f.BinaryFragment, reverse: reverse}
	switch {
	case f.IsNew:
		p.isNew, p.oldName = 1, ""
	case f.IsDelete:
		p.isDelete, p.newName = 1, ""
	case !f.IsRename && !f.IsCopy && f.OldMode == 0 && f.NewMode == 0 && !f.IsBinary:
		// a diff without git's headers: git decides whether it creates
		// the file by the hunks and the tree (parse_single_patch,
		// check_preimage)
		p.isNew, p.isDelete = -1, -1
		oldLines, newLines := 0, 0
		for _, fr := range f.TextFragments {
			oldLines += int(fr.OldLines)
			newLines += int(fr.NewLines)
		}
		if oldLines > 0 || len(f.TextFragments) > 1 {
			p.isNew = 0
		}
		if newLines > 0 || len(f.TextFragments) > 1 {
			p.isDelete = 0
		}
	}
	if reverse {
		p.oldName, p.newName = p.newName, p.oldName
		if p.newMode != 0 {
			p.oldMode, p.newMode = p.newMode, p.oldMode
		}
		p.isNew, p.isDelete = p.isDelete, p.isNew
		p.oldOID, p.newOID = p.newOID, p.oldOID
		p.binFrag = f.ReverseBinaryFragment
	}
	for _, tf := range f.TextFragments {
		p.frags = append(p.frags, prepareFragment(tf, reverse))
	}
	return p
}

// name is the name git's messages use: the old one, else the new.
func (p *filePatch) name() string {
	if p.oldName != "" {
		return p.oldName
	}
	return p.newName
}

// sayName is git's say_patch_name: "old => new" for a rename or copy,
// quoted as git quotes paths.
func (p *filePatch) sayName() string {
	if p.oldName != "" && p.newName != "" && p.oldName != p.newName {
		return quote(p.oldName) + " => " + quote(p.newName)
	}
	if p.newName != "" {
		return quote(p.newName)
	}
	return quote(p.oldName)
}

// tableEntry is what git's fn_table records of a path: the patch that
// wrote it, or that it was or will be removed.
type tableEntry struct {
	patch       *filePatch
	wasDeleted  bool
	toBeDeleted bool
}

type applier struct {
	tree  Tree
	opt   Options
	res   *Result
	table map[string]*tableEntry
	// the symlinks the patch removes and keeps or creates
	removedLinks, keptLinks map[string]bool
}

func (a *applier) run(list []*filePatch) {
	a.removedLinks, a.keptLinks = map[string]bool{}, map[string]bool{}
	for _, p := range list {
		if p.oldName != "" && p.oldMode&modeType == modeSymlink && (p.isRename || p.isDelete != 0) {
			a.removedLinks[p.oldName] = true
		}
		if p.newName != "" && p.newMode&modeType == modeSymlink {
			a.keptLinks[p.newName] = true
		}
	}
	for _, p := range list { // prepare_fn_table
		if p.newName == "" || p.isRename {
			a.table[p.oldName] = &tableEntry{toBeDeleted: true}
		}
	}
	failed := false
	for _, p := range list {
		a.res.current = p.res
		a.res.say(true, "Checking patch %s...", p.sayName())
		p.res.Checked = true
		err := a.check(p)
		if errors.Is(err, errAbort) {
			return
		}
		if err != nil {
			failed = true
		}
	}
	a.res.current = nil
	if a.opt.Check || failed && !a.opt.Reject {
		return
	}
	a.res.wrote = true
	w := a.newWriter(list)
	for _, p := range list { // write_out_results' reports
		if p.rejected {
			continue
		}
		if p.isDelete <= 0 {
			if why := w.create(p.newName); why != "" { // create_one_file dies
				a.res.current = p.res
				a.fail(p, "unable to write file '%s' mode %o: %s", p.newName, p.newMode, why)
				a.res.current, a.res.Fatal = nil, p.res
				return
			}
		}
		n := 0
		for _, h := range p.res.Hunks {
			if !h.Applied {
				n++
			}
		}
		if n == 0 {
			a.res.say(true, "Applied patch %s cleanly.", p.sayName())
			continue
		}
		if p.newName == "" { // git's write_out_one_reject dies there
			a.res.say(false, "fatal: internal error")
			a.res.Fatal = p.res
			return
		}
		if n == 1 {
			a.res.say(false, "Applying patch %s with 1 reject...", p.sayName())
		} else {
			a.res.say(false, "Applying patch %s with %d rejects...", p.sayName(), n)
		}
		for i, h := range p.res.Hunks {
			if h.Applied {
				a.res.say(false, "Hunk #%d applied cleanly.", i+1)
			} else {
				a.res.say(false, "Rejected hunk #%d.", i+1)
			}
		}
	}
}

// fail records git's error for p and returns it.
func (a *applier) fail(p *filePatch, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	a.res.report(false, "error: ", err.Error())
	if p != nil && p.res.Err == nil {
		p.res.Err = err
	}
	return err
}

func (a *applier) warn(p *filePatch, format string, args ...any) {
	w := fmt.Sprintf(format, args...)
	a.res.report(false, "warning: ", w)
	p.res.Warnings = append(p.res.Warnings, w)
}

// previous is git's previous_patch: the patch of this input that wrote
// p's old name before, if any; gone when one removed it.
func (a *applier) previous(p *filePatch) (prev *filePatch, gone bool) {
	if p.isCopy || p.isRename {
		return nil, false // "git" patches do not depend on the order
	}
	e := a.table[p.oldName]
	switch {
	case p.oldName == "" || e == nil || e.toBeDeleted:
		return nil, false
	case e.wasDeleted:
		return nil, true
	}
	return e.patch, false
}

// check is git's check_patch: p's preconditions, then its hunks.
func (a *applier) check(p *filePatch) error {
	p.rejected = true
	res := p.res
	// check_preimage
	var stMode uint32
	if p.oldName != "" {
		prev, gone := a.previous(p)
		if gone {
			return a.fail(p, "path %s has been renamed/deleted", p.oldName)
		}
		exists := true
		if prev != nil {
			stMode = prev.newMode
		} else {
			stMode = a.tree.Mode(p.oldName)
			exists = stMode != 0
		}
		if !exists {
			if p.isNew < 0 {
				p.isNew, p.isDelete, p.oldName = 1, 0, ""
				goto created
			}
			if a.opt.Index {
				return a.fail(p, "%s: does not exist in index", p.oldName)
			}
			return a.fail(p, "%s: No such file or directory", p.oldName)
		}
		if p.isNew < 0 {
			p.isNew = 0
		}
		if p.oldMode == 0 {
			p.oldMode = stMode
		}
		if (stMode^p.oldMode)&modeType != 0 {
			return a.fail(p, "%s: wrong type", p.oldName)
		}
		if stMode != p.oldMode {
			a.warn(p, "%s has type %o, expected %o", p.oldName, stMode, p.oldMode)
		}
		if p.newMode == 0 && p.isDelete == 0 {
			p.newMode = stMode
		}
	}
created:
	okIfExists := false
	if e := a.table[p.newName]; p.newName != "" && e != nil && (e.wasDeleted || e.toBeDeleted) {
		okIfExists = true
	}
	if p.newName != "" && (p.isNew > 0 || p.isRename || p.isCopy) {
		if !okIfExists && a.tree.Mode(p.newName) != 0 && !a.symlinkLeading(p.newName) {
			if a.opt.Index {
				return a.fail(p, "%s: already exists in index", p.newName)
			}
			return a.fail(p, "%s: already exists in working directory", p.newName)
		}
		if p.newMode == 0 {
			if p.isNew > 0 {
				p.newMode = modeRegular | 0o644
			} else {
				p.newMode = p.oldMode
			}
		}
	}
	if p.newName != "" && p.oldName != "" {
		if p.newMode == 0 {
			p.newMode = p.oldMode
		}
		if (p.oldMode^p.newMode)&modeType != 0 {
			if p.oldName == p.newName {
				return a.fail(p, "new mode (%o) of %s does not match old mode (%o)", p.newMode, p.newName, p.oldMode)
			}
			return a.fail(p, "new mode (%o) of %s does not match old mode (%o) of %s", p.newMode, p.newName, p.oldMode, p.oldName)
		}
	}
	for _, c := range p.unsafePaths() { // check_unsafe_path
		if c.name != "" && !ValidPath(c.name, c.mode) {
			err := a.fail(p, "invalid path '%s'", c.name)
			a.res.Err = err
			return fmt.Errorf("%w: %w", errAbort, err)
		}
	}
	if p.isDelete == 0 && a.beyondSymlink(p.newName) {
		return a.fail(p, "affected file '%s' is beyond a symbolic link", p.newName)
	}
	if err := a.applyData(p); err != nil {
		return a.fail(p, "%s: patch does not apply", p.name())
	}
	p.rejected = false
	res.OldName, res.NewName, res.Mode = p.oldName, p.newName, p.newMode
	if p.newName == "" {
		res.Content, res.Mode = nil, 0
	}
	return nil
}

// symlinkLeading is git's has_symlink_leading_path: a directory on the
// way to path is a symlink in the tree.
func (a *applier) symlinkLeading(path string) bool {
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && a.tree.Mode(path[:i])&modeType == modeSymlink {
			return true
		}
	}
	return false
}

// beyondSymlink is git's path_is_beyond_symlink: a directory on the way to
// path is a symlink the patch keeps or creates, or one of the tree that
// the patch does not remove.
func (a *applier) beyondSymlink(path string) bool {
	if path == "" {
		return false
	}
	for i := len(path) - 1; i > 0; i-- {
		if path[i] != '/' {
			continue
		}
		dir := path[:i]
		if a.keptLinks[dir] {
			return true
		}
		if a.removedLinks[dir] {
			continue
		}
		if a.tree.Mode(dir)&modeType == modeSymlink {
			return true
		}
	}
	return false
}

// applyData is git's apply_data: the file before p (the tree's, or what
// an earlier file of the patch left), p's hunks applied to it.
func (a *applier) applyData(p *filePatch) error {
	var old []byte
	prev, gone := a.previous(p)
	switch {
	case gone:
		return a.fail(p, "path %s has been renamed/deleted", p.oldName)
	case prev != nil:
		old = prev.result
	case p.oldName != "":
		if a.symlinkLeading(p.oldName) {
			return a.fail(p, "reading from '%s' beyond a symbolic link", p.oldName)
		}
		b, err := a.tree.ReadFile(p.oldName)
		if err != nil {
			return a.fail(p, "failed to read %s", p.oldName)
		}
		old = b
	}
	p.res.Old = old
	var result []byte
	if p.binary {
		p.res.Binary = true
		b, err := a.applyBinary(p, old)
		if err != nil {
			return err
		}
		result = b
	} else {
		b, err := a.applyFragments(p, old)
		if err != nil {
			return err
		}
		result = b
	}
	p.result = result
	p.res.Content = result
	// add_to_fn_table
	if p.newName != "" {
		a.table[p.newName] = &tableEntry{patch: p}
	}
	if p.newName == "" || p.isRename {
		a.table[p.oldName] = &tableEntry{wasDeleted: true}
	}
	if p.isDelete > 0 && len(result) > 0 {
		return a.fail(p, "removal patch leaves file contents")
	}
	return nil
}

// applyFragments is git's apply_fragments for a text patch.
func (a *applier) applyFragments(p *filePatch, old []byte) ([]byte, error) {
	img := newImage(old)
	hunks := make([]*Hunk, len(p.frags))
	for i := range hunks {
		hunks[i] = &Hunk{}
	}
	p.res.Hunks = hunks
	for k, fr := range p.frags {
		h := hunks[k]
		matchBeginning := fr.oldpos == 0 || fr.oldpos == 1
		matchEnd := fr.trailing == 0
		pos := 0
		if fr.newpos > 0 {
			pos = fr.newpos - 1
		}
		at := img.findPos(fr, pos, matchBeginning, matchEnd)
		if at < 0 {
			a.res.report(true, "error: ", "while searching for:\n"+strings.Join(bytesToStrings(fr.pre), ""))
			h.Err = a.fail(nil, "patch failed: %s:%d", p.name(), fr.oldpos)
			if !a.opt.Reject {
				return nil, h.Err
			}
			continue
		}
		h.Applied, h.Line = true, at+1
		h.Offset = at - pos
		if h.Offset != 0 {
			off := h.Offset
			if p.reverse {
				off = -off
			}
			unit := "lines"
			if off == 1 {
				unit = "line"
			}
			a.res.say(true, "Hunk #%d succeeded at %d (offset %d %s).", k+1, at+1, off, unit)
		}
		h.OldLines = make([]int, len(fr.pre))
		for i := range fr.pre {
			h.OldLines[i] = img.lines[at+i].orig
		}
		img.update(fr, k, at)
	}
	for i, l := range img.lines {
		if l.patched {
			h := hunks[l.hunk]
			if h.NewLines == nil {
				h.NewLines = make([]int, len(p.frags[l.hunk].post))
			}
			h.NewLines[l.post] = i + 1
		}
	}
	return img.bytes(), nil
}

func bytesToStrings(b [][]byte) []string {
	out := make([]string, len(b))
	for i, l := range b {
		out[i] = string(l)
	}
	return out
}

// quote quotes a path as git does in its messages (core.quotePath on):
// in double quotes with C escapes when it has a control character, a
// quote, a backslash or a byte of 0x80 and above; as it is otherwise.
func quote(name string) string {
	need := false
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			need = true
			break
		}
	}
	if !need {
		return name
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(name); i++ {
		c := name[i]
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
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

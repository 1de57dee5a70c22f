package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kpatch/spec"
)

// TestBlockOps places the operations that attach to the lines they change
// on testdata/block.c and checks the whole file after the edit: the input
// with exactly the one change, or the error and the file untouched.
func TestBlockOps(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("testdata", "block.c"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		op       string
		args     []string
		text     string
		old, new string // the file after the edit is the input with old replaced by new
		wantErr  error
	}{
		{name: "replace a statement in a function", op: "replace-block",
			args: []string{"notify", "\ttest_and_set_tsk_thread_flag(current, TIF_NOTIFY_RESUME);"}, text: "\t/* no-op */\n",
			old: "\ttest_and_set_tsk_thread_flag(current, TIF_NOTIFY_RESUME);\n", new: "\t/* no-op */\n"},
		{name: "replace two lines", op: "replace-block",
			args: []string{"add", "\tcase TWA_NMI_CURRENT:\n\t\tirq_work_queue(this_cpu_ptr(&irq_work_NMI_resume));"},
			text: "\tcase TWA_NMI_CURRENT:\n\t\tset_flag();\n\t\tirq_work_queue(this_cpu_ptr(&irq_work_NMI_resume));\n",
			old:  "\t\tirq_work_queue(", new: "\t\tset_flag();\n\t\tirq_work_queue("},
		{name: "remove a line: no text", op: "replace-block",
			args: []string{"add", "\t\tset_notify_resume(task);"},
			old:  "\t\tset_notify_resume(task);\n", new: ""},
		{name: "block outside the function", op: "replace-block",
			args: []string{"notify", "\t\tset_notify_resume(task);"}, wantErr: ErrAnchorMissing},
		{name: "block twice in the file", op: "replace-block",
			args: []string{"-", "\tif (add_mark)"}, wantErr: ErrAnchorAmbiguous},
		{name: "text already there", op: "replace-block",
			args: []string{"add", "\t\tgone();"}, text: "\t\tset_notify_resume(task);\n", wantErr: ErrAlreadyPresent},
		{name: "stable: text already there leaves the file", op: "stable-replace-block",
			args: []string{"add", "\t\tgone();"}, text: "\t\tset_notify_resume(task);\n", old: "", new: ""},
		{name: "stable: the lines are replaced as replace-block does", op: "stable-replace-block",
			args: []string{"notify", "\ttest_and_set_tsk_thread_flag(current, TIF_NOTIFY_RESUME);"}, text: "\t/* no-op */\n",
			old: "\ttest_and_set_tsk_thread_flag(current, TIF_NOTIFY_RESUME);\n", new: "\t/* no-op */\n"},
		{name: "stable: the text holds the lines, and is there", op: "stable-replace-block",
			args: []string{"add", "\t\tirq_work_queue(this_cpu_ptr(&irq_work_NMI_resume));"}, text: "\tcase TWA_NMI_CURRENT:\n\t\tirq_work_queue(this_cpu_ptr(&irq_work_NMI_resume));\n",
			old: "", new: ""},
		{name: "stable: neither the lines nor the text", op: "stable-replace-block",
			args: []string{"add", "\t\tgone();"}, text: "\t\tnot_there();\n", wantErr: ErrAnchorMissing},
		{name: "insert before the second of two alike", op: "insert-before-block",
			args: []string{"other", "\tif (add_mark)\n\t\tstore(PERF_CONTEXT_USER);"}, text: "\tif (cookie)\n\t\tgoto out;\n",
			old: "\tif (add_mark)\n\t\tstore(PERF_CONTEXT_USER);", new: "\tif (cookie)\n\t\tgoto out;\n\tif (add_mark)\n\t\tstore(PERF_CONTEXT_USER);"},
		{name: "insert before: already there", op: "insert-before-block",
			args: []string{"other", "\tif (add_mark)\n\t\tstore(PERF_CONTEXT_USER);"}, text: "\tif (add_mark)\n\t\tstore(PERF_CONTEXT_KERNEL);\n",
			wantErr: ErrAlreadyPresent},
		{name: "range removed with the blank line after it", op: "replace-range",
			args: []string{"-", "#ifdef CONFIG_UPROBES", "#endif /* CONFIG_UPROBES */"},
			old:  "#ifdef CONFIG_UPROBES\nstatic bool at_entry(struct pt_regs *regs)\n{\n\treturn true;\n}\n\n#else\nstatic bool at_entry(struct pt_regs *regs)\n{\n\treturn false;\n}\n#endif /* CONFIG_UPROBES */\n\n", new: ""},
		{name: "range without its end", op: "replace-range",
			args: []string{"-", "#ifdef CONFIG_UPROBES", "#endif /* CONFIG_NOPE */"}, wantErr: ErrAnchorMissing},
		{name: "substitute in one function, indentation kept", op: "substitute",
			args: []string{"add", "false, false);", "false, false, 0);"},
			old:  "\t\t\t  false, false);\n", new: "\t\t\t  false, false, 0);\n"},
		{name: "substitute in the file", op: "substitute",
			args: []string{"-", "crosstask, false);", "crosstask, false, 0);"},
			old:  "crosstask, false);", new: "crosstask, false, 0);"},
		{name: "substitute twice in the file", op: "substitute",
			args: []string{"-", "max_depth,", "depth,"}, wantErr: ErrAnchorAmbiguous},
		{name: "substitute already done", op: "substitute",
			args: []string{"add", "false, true);", "false, false);"}, wantErr: ErrAlreadyPresent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := memFiles{}
			err := Apply(files, spec.Edit{Path: "block.c", Op: tt.op, Args: tt.args, Text: tt.text, Src: "test:1"})
			got, _ := files.Get("block.c")
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if string(got) != string(orig) {
					t.Errorf("the file changed on a refused edit")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.old != "" && strings.Count(string(orig), tt.old) != 1 {
				t.Fatalf("test: %q is not once in the input", tt.old)
			}
			want := strings.Replace(string(orig), tt.old, tt.new, 1)
			if string(got) != want {
				t.Errorf("file after the edit:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestStable: only stable-replace-block is an edit that a base may have
// already.
func TestStable(t *testing.T) {
	for op := range Ops {
		if got, want := Stable(op), op == "stable-replace-block"; got != want {
			t.Errorf("Stable(%q) = %v, want %v", op, got, want)
		}
	}
}

// TestBlockCandidates: an edit whose lines are not in its function names
// the lines of the function most like the first of them; one whose
// function is missing names the functions of the file.
func TestBlockCandidates(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // the first candidate
	}{
		{name: "lines changed in the tree", args: []string{"add", "\t\tirq_work_queue(this_cpu_ptr(&irq_work_NMI));"}, want: "\t\tirq_work_queue(this_cpu_ptr(&irq_work_NMI_resume));"},
		{name: "function missing", args: []string{"ad", "\tx();"}, want: "int add(struct task_struct *task, int notify)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Apply(memFiles{}, spec.Edit{Path: "block.c", Op: "replace-block", Args: tt.args, Text: "x\n", Src: "test:1"})
			var ae *AnchorError
			if !errors.As(err, &ae) || !errors.Is(err, ErrAnchorMissing) {
				t.Fatalf("err = %v, want a missing anchor", err)
			}
			if len(ae.Candidates) == 0 || ae.Candidates[0].Text != tt.want {
				t.Errorf("candidates %+v, want %q first", ae.Candidates, tt.want)
			}
		})
	}
}

// Command kpatch regenerates, checks and tests the "deferred user-space
// unwinding" kernel patch series from Go templates, and carries it to its
// next revision.
//
//	kpatch gen             write the series as mail, as git format-patch would
//	kpatch verify          check a series for the review's rules and C invariants
//	kpatch test qemu       build, boot and check the series in QEMU (also: test --qemu)
//	kpatch test build      build every patch in three configurations (also: test --build)
//	kpatch unwind          walk a user stack from a core dump or a snapshot
//	kpatch tree            print (and create once) the cached Debian 6.12 kernel tree
//	kpatch spec            write the built-in series description out for editing
//	kpatch series diff     range-diff two versions of a series
//	kpatch series import   write a posted series as patch files
//	kpatch series deps     check a stacked series' base-commit and prerequisites
//	kpatch revision new    start the next revision in a spec copy
//	kpatch trailers        add review trailers (Acked-by, Reported-by, Link...) from replies to a spec copy
//	kpatch send            post the revision with git send-email and record it
//	kpatch help [CMD]      list the commands, or print the flags of one
//
// Every command is parsed by one frame (cli.go): flags may come before and
// after the positional arguments, as git takes them ("--" ends the flags);
// the flags naming the series (--tree, --base, -v, --spec, --plain) and
// --json are defined once (flags.go); help goes to standard output once.
//
// Exit status, for every command:
//
//	0    success
//	1    checks failed (verify found errors, a test case or a build failed),
//	     or the work failed once started (a tool failed, standard output
//	     could not be written)
//	2    usage or bad input: an unknown flag or command, a missing or extra
//	     argument, a flag value that is out of range or contradicts another;
//	     an input that cannot be used (a missing file, not a kernel tree or
//	     not mail, an unknown or damaged revision, edits that cannot be
//	     placed on the tree, an -o or --branch in the way): nothing was
//	     checked or written (isBadInput in cli.go lists them)
//	130  interrupted by SIGINT (Ctrl-C) or SIGTERM
//
// Errors are one line on standard error, "kpatch CMD: cause: what to do".
// With --json a refusal is also one JSON object on standard output,
// {"error": "...", "exit": N}. On SIGINT or SIGTERM a command stops
// within a second, writes nothing more and leaves every output as it was
// before or whole (docs/cli.md).
package main

import "os"

func main() {
	stop := startProfiles()
	code := run(os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

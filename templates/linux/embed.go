// Package linux embeds the series description of the "deferred user-space
// unwinding" series (unwind_user: x86: Deferred unwinding infrastructure):
// the templates of the files it creates under files/, and one directory per
// revision (v11/) with the cover letter and the patch descriptions.
//
// The format is documented in package spec. The templates carry the series'
// GPL-2.0 kernel code; every file they emit keeps its SPDX line.
package linux

import "embed"

// FS holds files/ and the revision directories.
//
//go:embed files v*
var FS embed.FS

package ktypes

// Predefined is the declaration cc/v4 requires in every translation unit.
const Predefined = "int __predefined_declarator;\n"

// Annotations are the kernel's annotations that change nothing cc/v4 reads
// (sparse's address spaces, sections, hints to the compiler), defined
// empty; nokprobe_inline is inline. Annotations that change a layout
// (__packed, __aligned) are not among them: a size computed without them
// would be wrong.
const Annotations = `#define __user
#define __kernel
#define __iomem
#define __percpu
#define __rcu
#define __force
#define __init
#define __exit
#define __initdata
#define __ref
#define __sched
#define __cold
#define __weak
#define __visible
#define __noreturn
#define __must_check
#define __maybe_unused
#define __always_unused
#define __latent_entropy
#define __read_mostly
#define __ro_after_init
#define __randomize_layout
#define __printf(a, b)
#define __acquires(x)
#define __releases(x)
#define __must_hold(x)
#define __cond_acquires(x)
#define __section(x)
#define __counted_by(x)
#define __free(x)
#define noinline
#define notrace
#define nokprobe_inline inline
#define asmlinkage
#define __no_kcsan
#define __no_sanitize_address
#define fastcall
#define likely(x) (x)
#define unlikely(x) (x)
`

// attributes are noinstr and __always_inline as the GNU attributes the
// kernel makes of them, which cc/v4 keeps in its AST.
const attributes = `#define __always_inline inline __attribute__((__always_inline__))
#define noinstr __attribute__((__section__(".noinstr.text")))
`

// plainAttributes are noinstr and __always_inline as what they change in
// a type: nothing, and inline.
const plainAttributes = `#define __always_inline inline
#define noinstr
`

// Prelude is the part every translation unit kpatch gives cc/v4 in place
// of the kernel headers starts with: Predefined, the annotations, noinstr
// and __always_inline (as GNU attributes when keepAttributes, for readers
// of the AST; else as what they change in a type), and Types.
func Prelude(keepAttributes bool) string {
	a := plainAttributes
	if keepAttributes {
		a = attributes
	}
	return Predefined + a + Annotations + Types
}

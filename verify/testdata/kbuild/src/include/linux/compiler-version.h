/* the compiler's version, for kbuild's dependency tracking */

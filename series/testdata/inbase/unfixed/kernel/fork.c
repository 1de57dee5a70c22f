// the kernel tree marker kernelsrc wants

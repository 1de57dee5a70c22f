package cunit

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"kpatch/internal/ktypes"
)

// The prelude that stands in for the kernel headers a unit does not read.

// unitPrelude is what the kernel headers a unit does not read would have
// given its functions: the build's options and BITS_PER_LONG, the types,
// the attributes as GNU attributes cc/v4 keeps in the AST (noinstr as its
// section, __always_inline as inline plus always_inline), the other
// annotations empty, and the kernel's loop macros as the for statements
// they are. typedefs are names the file uses as types; loops are names of
// iterator macros the file uses that the prelude does not define.
func (e Env) unitPrelude(typedefs, loops []string) string {
	var b strings.Builder
	b.WriteString(e.preludeDefines())
	b.WriteString(ktypes.Prelude(true))
	b.WriteString(`#define __packed
#define __aligned(x)
#define for_each_process_thread(p, t) for (p = 0, t = 0; p; p = 0)
#define list_for_each_entry(pos, head, member) for (pos = (void *)(head); pos; pos = 0)
#define list_for_each_entry_safe(pos, n, head, member) for (pos = (void *)(head), n = 0; pos; pos = n)
#define list_for_each_entry_rcu(pos, head, member, ...) for (pos = (void *)(head); pos; pos = 0)
#define list_for_each_entry_srcu(pos, head, member, cond) for ((void)(cond), pos = (void *)(head); pos; pos = 0)
#define hlist_for_each_entry(pos, head, member) for (pos = (void *)(head); pos; pos = 0)
#define for_each_possible_cpu(cpu) for (cpu = 0; cpu < 1; cpu++)
#define for_each_online_cpu(cpu) for (cpu = 0; cpu < 1; cpu++)
#define for_each_set_bit(bit, addr, size) for (bit = 0; bit < (size) && (addr); bit++)
#define container_of(ptr, type, member) ((type *)(ptr))
#define container_of_const(ptr, type, member) ((type *)(ptr))
#define list_entry(ptr, type, member) ((type *)(ptr))
#define list_first_entry(ptr, type, member) ((type *)(ptr))
#define list_first_entry_or_null(ptr, type, member) ((type *)(ptr))
#define list_last_entry(ptr, type, member) ((type *)(ptr))
#define hlist_entry(ptr, type, member) ((type *)(ptr))
#define sizeof_field(type, member) sizeof(((type *)0)->member)
#define offsetof(type, member) __builtin_offsetof(type, member)
#define scoped_guard(_name, ...) if (1)
#define scoped_cond_guard(_name, _fail, ...) if (1)
#define __net_init
#define __net_exit
#define __net_initdata
#define __initconst
#define __init_or_module
#define __exit_p(x) x
#define min_t(type, x, y) ((type)(x) < (type)(y) ? (type)(x) : (type)(y))
#define max_t(type, x, y) ((type)(x) > (type)(y) ? (type)(x) : (type)(y))
#define clamp_t(type, val, lo, hi) min_t(type, max_t(type, val, lo), hi)
#define clamp_val(val, lo, hi) clamp_t(typeof(val), val, lo, hi)
#define hlist_for_each_entry_rcu(pos, head, member, ...) for (pos = (void *)(head); pos; pos = 0)
#define hlist_for_each_entry_safe(pos, n, head, member) for (pos = (void *)(head), n = 0; pos; pos = n)
#define list_for_each(pos, head) for (pos = (head); pos; pos = 0)
#define list_for_each_safe(pos, n, head) for (pos = (head), n = 0; pos; pos = n)
#define list_for_each_entry_reverse(pos, head, member) for (pos = (void *)(head); pos; pos = 0)
#define list_for_each_entry_continue(pos, head, member) for (pos = (void *)(head); pos; pos = 0)
#define skb_list_walk_safe(first, skb, next_skb) for (skb = (first), next_skb = 0; skb; skb = next_skb)
#define skb_queue_walk(queue, skb) for (skb = (void *)(queue); skb; skb = 0)
#define skb_queue_walk_safe(queue, skb, tmp) for (skb = (void *)(queue), tmp = 0; skb; skb = tmp)
#define for_each_cpu(cpu, mask) for (cpu = 0; cpu < 1 && (mask); cpu++)
#define for_each_node(node) for (node = 0; node < 1; node++)
#define for_each_online_node(node) for (node = 0; node < 1; node++)
#define __define_initcall_use(fn, id) static void *__initcall_##id##_##fn __attribute__((__unused__)) = (void *)fn;
#define module_init(fn) __define_initcall_use(fn, module)
#define module_exit(fn) __define_initcall_use(fn, exit)
#define early_initcall(fn) __define_initcall_use(fn, early)
#define core_initcall(fn) __define_initcall_use(fn, core)
#define postcore_initcall(fn) __define_initcall_use(fn, postcore)
#define arch_initcall(fn) __define_initcall_use(fn, arch)
#define subsys_initcall(fn) __define_initcall_use(fn, subsys)
#define fs_initcall(fn) __define_initcall_use(fn, fs)
#define device_initcall(fn) __define_initcall_use(fn, device)
#define late_initcall(fn) __define_initcall_use(fn, late)
#define late_initcall_sync(fn) __define_initcall_use(fn, late_sync)
#define __initcall(fn) device_initcall(fn)
#define __exitcall(fn) module_exit(fn)
#define EXPORT_SYMBOL(sym) extern int __export_##sym
#define EXPORT_SYMBOL_GPL(sym) extern int __export_##sym
`)
	b.WriteString(declarationMacros)
	b.WriteString(preludeTypes)
	b.WriteString(unitTypes)
	for _, t := range typedefs {
		if !preludeTypeNames[t] && !unitTypeNames[t] {
			fmt.Fprintf(&b, "typedef int %s;\n", t)
		}
	}
	for _, m := range loops {
		// an iterator macro the prelude does not know: a loop over its
		// arguments (their identifiers stay uses)
		fmt.Fprintf(&b, "#define %s(...) for ((void)(__VA_ARGS__);;)\n", m)
	}
	return b.String()
}

// unitTypes are the kernel's typedef names that do not end in _t (those
// are declared as they are met, see typedefWords).
const unitTypes = `typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed char __s8;
typedef short __s16;
typedef int __s32;
typedef long long __s64;
typedef unsigned short __le16, __be16;
typedef unsigned int __le32, __be32;
typedef unsigned long long __le64, __be64;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef unsigned short ushort;
`

var unitTypeNames = map[string]bool{"__u8": true, "__u16": true, "__u32": true, "__u64": true, "__s8": true, "__s16": true,
	"__s32": true, "__s64": true, "__le16": true, "__be16": true, "__le32": true, "__be32": true, "__le64": true,
	"__be64": true, "uint": true, "ulong": true, "ushort": true}

// declarationMacros are the kernel's declaration macros that paste names
// together (include/linux/sysfs.h, device.h, device/*.h, hwmon-sysfs.h,
// seq_file.h, moduleparam.h), as what they declare and use: static
// DEVICE_ATTR_RW(x) uses x_show and x_store, ATTRIBUTE_GROUPS(x) uses
// x_attrs, DEFINE_SHOW_ATTRIBUTE(x) uses x_show, module_param(x, t, m)
// uses x and param_ops_t. Only the names matter to the
// rules: the attribute's name and mode, and the functions the seq_file
// macros define, are left out.
const declarationMacros = `#define __ATTR(_name, _mode, _show, _store) { .show = _show, .store = _store, }
#define __ATTR_PREALLOC(_name, _mode, _show, _store) __ATTR(_name, _mode, _show, _store)
#define __ATTR_IGNORE_LOCKDEP(_name, _mode, _show, _store) __ATTR(_name, _mode, _show, _store)
#define __ATTR_RO(_name) { .show = _name##_show, }
#define __ATTR_RO_MODE(_name, _mode) { .show = _name##_show, }
#define __ATTR_RW_MODE(_name, _mode) { .show = _name##_show, .store = _name##_store, }
#define __ATTR_WO(_name) { .store = _name##_store, }
#define __ATTR_RW(_name) __ATTR(_name, 0644, _name##_show, _name##_store)
#define __ATTR_NULL { 0 }
#define DEVICE_ATTR(_name, _mode, _show, _store) struct device_attribute dev_attr_##_name = __ATTR(_name, _mode, _show, _store)
#define DEVICE_ATTR_PREALLOC(_name, _mode, _show, _store) struct device_attribute dev_attr_##_name = __ATTR(_name, _mode, _show, _store)
#define DEVICE_ATTR_IGNORE_LOCKDEP(_name, _mode, _show, _store) struct device_attribute dev_attr_##_name = __ATTR(_name, _mode, _show, _store)
#define DEVICE_ATTR_RW(_name) struct device_attribute dev_attr_##_name = __ATTR_RW(_name)
#define DEVICE_ATTR_ADMIN_RW(_name) struct device_attribute dev_attr_##_name = __ATTR_RW_MODE(_name, 0600)
#define DEVICE_ATTR_RO(_name) struct device_attribute dev_attr_##_name = __ATTR_RO(_name)
#define DEVICE_ATTR_ADMIN_RO(_name) struct device_attribute dev_attr_##_name = __ATTR_RO_MODE(_name, 0400)
#define DEVICE_ATTR_WO(_name) struct device_attribute dev_attr_##_name = __ATTR_WO(_name)
#define DRIVER_ATTR_RW(_name) struct driver_attribute driver_attr_##_name = __ATTR_RW(_name)
#define DRIVER_ATTR_RO(_name) struct driver_attribute driver_attr_##_name = __ATTR_RO(_name)
#define DRIVER_ATTR_WO(_name) struct driver_attribute driver_attr_##_name = __ATTR_WO(_name)
#define BUS_ATTR_RW(_name) struct bus_attribute bus_attr_##_name = __ATTR_RW(_name)
#define BUS_ATTR_RO(_name) struct bus_attribute bus_attr_##_name = __ATTR_RO(_name)
#define BUS_ATTR_WO(_name) struct bus_attribute bus_attr_##_name = __ATTR_WO(_name)
#define CLASS_ATTR_RW(_name) struct class_attribute class_attr_##_name = __ATTR_RW(_name)
#define CLASS_ATTR_RO(_name) struct class_attribute class_attr_##_name = __ATTR_RO(_name)
#define CLASS_ATTR_WO(_name) struct class_attribute class_attr_##_name = __ATTR_WO(_name)
#define __BIN_ATTR(_name, _mode, _read, _write, _size) { .read = _read, .write = _write, .size = _size, }
#define __BIN_ATTR_RO(_name, _size) { .read = _name##_read, .size = _size, }
#define __BIN_ATTR_WO(_name, _size) { .write = _name##_write, .size = _size, }
#define __BIN_ATTR_RW(_name, _size) __BIN_ATTR(_name, 0644, _name##_read, _name##_write, _size)
#define __BIN_ATTR_ADMIN_RO(_name, _size) { .read = _name##_read, .size = _size, }
#define __BIN_ATTR_ADMIN_RW(_name, _size) __BIN_ATTR(_name, 0600, _name##_read, _name##_write, _size)
#define BIN_ATTR(_name, _mode, _read, _write, _size) struct bin_attribute bin_attr_##_name = __BIN_ATTR(_name, _mode, _read, _write, _size)
#define BIN_ATTR_RO(_name, _size) struct bin_attribute bin_attr_##_name = __BIN_ATTR_RO(_name, _size)
#define BIN_ATTR_WO(_name, _size) struct bin_attribute bin_attr_##_name = __BIN_ATTR_WO(_name, _size)
#define BIN_ATTR_RW(_name, _size) struct bin_attribute bin_attr_##_name = __BIN_ATTR_RW(_name, _size)
#define BIN_ATTR_ADMIN_RO(_name, _size) struct bin_attribute bin_attr_##_name = __BIN_ATTR_ADMIN_RO(_name, _size)
#define BIN_ATTR_ADMIN_RW(_name, _size) struct bin_attribute bin_attr_##_name = __BIN_ATTR_ADMIN_RW(_name, _size)
#define __ATTRIBUTE_GROUPS(_name) static const struct attribute_group *_name##_groups[] = { &_name##_group, NULL, }
#define ATTRIBUTE_GROUPS(_name) static const struct attribute_group _name##_group = { .attrs = _name##_attrs, }; __ATTRIBUTE_GROUPS(_name)
#define BIN_ATTRIBUTE_GROUPS(_name) static const struct attribute_group _name##_group = { .bin_attrs = _name##_attrs, }; __ATTRIBUTE_GROUPS(_name)
#define SENSOR_ATTR(_name, _mode, _show, _store, _index) { .dev_attr = __ATTR(_name, _mode, _show, _store), .index = _index }
#define SENSOR_ATTR_RO(_name, _func, _index) SENSOR_ATTR(_name, 0444, _func##_show, NULL, _index)
#define SENSOR_ATTR_RW(_name, _func, _index) SENSOR_ATTR(_name, 0644, _func##_show, _func##_store, _index)
#define SENSOR_ATTR_WO(_name, _func, _index) SENSOR_ATTR(_name, 0200, NULL, _func##_store, _index)
#define SENSOR_DEVICE_ATTR(_name, _mode, _show, _store, _index) struct sensor_device_attribute sensor_dev_attr_##_name = SENSOR_ATTR(_name, _mode, _show, _store, _index)
#define SENSOR_DEVICE_ATTR_RO(_name, _func, _index) SENSOR_DEVICE_ATTR(_name, 0444, _func##_show, NULL, _index)
#define SENSOR_DEVICE_ATTR_RW(_name, _func, _index) SENSOR_DEVICE_ATTR(_name, 0644, _func##_show, _func##_store, _index)
#define SENSOR_DEVICE_ATTR_WO(_name, _func, _index) SENSOR_DEVICE_ATTR(_name, 0200, NULL, _func##_store, _index)
#define SENSOR_ATTR_2(_name, _mode, _show, _store, _nr, _index) { .dev_attr = __ATTR(_name, _mode, _show, _store), .index = _index, .nr = _nr }
#define SENSOR_ATTR_2_RO(_name, _func, _nr, _index) SENSOR_ATTR_2(_name, 0444, _func##_show, NULL, _nr, _index)
#define SENSOR_ATTR_2_RW(_name, _func, _nr, _index) SENSOR_ATTR_2(_name, 0644, _func##_show, _func##_store, _nr, _index)
#define SENSOR_ATTR_2_WO(_name, _func, _nr, _index) SENSOR_ATTR_2(_name, 0200, NULL, _func##_store, _nr, _index)
#define SENSOR_DEVICE_ATTR_2(_name, _mode, _show, _store, _nr, _index) struct sensor_device_attribute_2 sensor_dev_attr_##_name = SENSOR_ATTR_2(_name, _mode, _show, _store, _nr, _index)
#define SENSOR_DEVICE_ATTR_2_RO(_name, _func, _nr, _index) SENSOR_DEVICE_ATTR_2(_name, 0444, _func##_show, NULL, _nr, _index)
#define SENSOR_DEVICE_ATTR_2_RW(_name, _func, _nr, _index) SENSOR_DEVICE_ATTR_2(_name, 0644, _func##_show, _func##_store, _nr, _index)
#define SENSOR_DEVICE_ATTR_2_WO(_name, _func, _nr, _index) SENSOR_DEVICE_ATTR_2(_name, 0200, NULL, _func##_store, _nr, _index)
#define module_param(name, type, perm) module_param_named(name, name, type, perm)
#define module_param_unsafe(name, type, perm) module_param_named(name, name, type, perm)
#define module_param_named(name, value, type, perm) static const void *__verify_param_##name __attribute__((__unused__)) = &(value), *__verify_param_ops_##name __attribute__((__unused__)) = &param_ops_##type
#define module_param_named_unsafe(name, value, type, perm) module_param_named(name, value, type, perm)
#define module_param_cb(name, ops, arg, perm) static const void *__verify_param_##name __attribute__((__unused__)) = (ops), *__verify_param_arg_##name __attribute__((__unused__)) = (arg)
#define module_param_array(name, type, nump, perm) module_param_array_named(name, name, type, nump, perm)
#define module_param_array_named(name, array, type, nump, perm) static const void *__verify_param_##name __attribute__((__unused__)) = (array), *__verify_param_ops_##name __attribute__((__unused__)) = &param_ops_##type, *__verify_param_n_##name __attribute__((__unused__)) = (nump)
#define module_param_hw(name, type, hwtype, perm) module_param_named(name, name, type, perm)
#define module_param_hw_named(name, value, type, hwtype, perm) module_param_named(name, value, type, perm)
#define module_param_hw_array(name, type, hwtype, nump, perm) module_param_array_named(name, name, type, nump, perm)
#define DEFINE_SEQ_ATTRIBUTE(__name) static const struct file_operations __name##_fops = { .open = (void *)&__name##_sops, }
#define DEFINE_SHOW_ATTRIBUTE(__name) static const struct file_operations __name##_fops = { .open = (void *)__name##_show, }
#define DEFINE_SHOW_STORE_ATTRIBUTE(__name) static const struct file_operations __name##_fops = { .open = (void *)__name##_show, .write = __name##_write, }
#define DEFINE_PROC_SHOW_ATTRIBUTE(__name) static const struct proc_ops __name##_proc_ops = { .proc_open = (void *)__name##_show, }
`

// PreludeMacros are the function-like macros the prelude defines for the
// units: the kernel macros whose uses the prelude's units see expanded.
var PreludeMacros = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, m := range preludeMacroRE().FindAllStringSubmatch(Envs()[0].unitPrelude(nil, nil), -1) {
		out[m[1]] = true
	}
	return out
})

var preludeMacroRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^#define ([A-Za-z_]\w*)\(`) })

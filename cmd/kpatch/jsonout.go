package main

import (
	"encoding/json"
	"io"
	"reflect"
)

// writeJSON writes v as every kpatch command writes JSON: indented by two
// spaces, with "<", ">" and "&" as they are (mail addresses,
// "Name <user@host>", are not escaped as \u003c), and every list that is
// empty as [] rather than null, so that a reader can range over it.
func writeJSON(w io.Writer, v any) error {
	emptyLists(reflect.ValueOf(v))
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// emptyLists sets every nil slice that v reaches through exported struct
// fields, pointers, slices and interfaces to an empty one (a []byte, which
// JSON writes as a string, is left alone, as are values with a MarshalJSON
// of their own). Maps are not entered: their values cannot be set.
func emptyLists(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			emptyLists(v.Elem())
		}
	case reflect.Struct:
		if v.Type().Implements(marshalerType) || (v.CanAddr() && v.Addr().Type().Implements(marshalerType)) {
			return
		}
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			if !t.Field(i).IsExported() {
				continue
			}
			f := v.Field(i)
			if f.Kind() == reflect.Slice && f.IsNil() && f.CanSet() && f.Type().Elem().Kind() != reflect.Uint8 {
				f.Set(reflect.MakeSlice(f.Type(), 0, 0))
				continue
			}
			emptyLists(f)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			emptyLists(v.Index(i))
		}
	}
}

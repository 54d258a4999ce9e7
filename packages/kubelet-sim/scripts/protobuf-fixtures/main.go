// Writes test/fixtures/protobuf/resource-v1.json: objects of the kinds kubelet-sim accepts as protobuf,
// each as the request body a Go client (client-go's protobuf serializer, k8s.io/apimachinery) sends
// and as the JSON the API server stores and returns for it (encoding/json of the same typed object,
// as kube-apiserver's JSON serializer writes it), from the objects in objects.json. Run it with
// `npm run generate:protobuf-fixtures -w @plugboard/kubelet-sim`.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

type fixture struct {
	Name     string          `json:"name"`
	Protobuf string          `json:"protobuf"`
	JSON     json.RawMessage `json:"json"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: protobuf-fixtures INPUT.json OUTPUT.json")
		os.Exit(2)
	}
	in, err := os.ReadFile(os.Args[1])
	check(err)
	var inputs []struct {
		Name   string          `json:"name"`
		Object json.RawMessage `json:"object"`
	}
	check(json.Unmarshal(in, &inputs))
	scheme := runtime.NewScheme()
	check(resourcev1.AddToScheme(scheme))
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	encoder := protobuf.NewSerializer(scheme, scheme)
	out := []fixture{}
	for _, input := range inputs {
		obj, gvk, err := decoder.Decode(input.Object, nil, nil)
		check(err)
		obj.GetObjectKind().SetGroupVersionKind(*gvk)
		var body bytes.Buffer
		check(encoder.Encode(obj, &body))
		stored, err := json.Marshal(obj)
		check(err)
		out = append(out, fixture{input.Name, base64.StdEncoding.EncodeToString(body.Bytes()), stored})
	}
	text, err := json.MarshalIndent(out, "", "  ")
	check(err)
	check(os.WriteFile(os.Args[2], append(text, '\n'), 0o644))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

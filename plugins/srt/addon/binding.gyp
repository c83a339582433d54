{
  "targets": [
    {
      "target_name": "srt_addon",
      "sources": ["srt-addon.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "<!@(pkg-config --cflags-only-I srt | sed s/-I//g)"],
      "libraries": ["<!@(pkg-config --libs srt)"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS"],
      "cflags_cc": ["-std=c++17", "-fno-exceptions"]
    }
  ]
}

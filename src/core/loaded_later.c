/* Nothing: this object only links the libraries loaded later (src/CMakeLists.txt). */

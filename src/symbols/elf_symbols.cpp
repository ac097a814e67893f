#include "symbols/elf_symbols.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "symbols/libdw.hpp"

namespace mainboard::symbols {

ElfSymbols elf_symbols(const std::string& path, const std::vector<std::string>& wanted) {
  ElfSymbols out;
  std::lock_guard lock(elfutils_mutex());
  const auto& dw = libdw();
  if (!dw) return out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  dw.elf_version(EV_CURRENT);
  Elf* elf = dw.elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (!elf) {
    ::close(fd);
    return out;
  }
  GElf_Ehdr ehdr;
  if (dw.gelf_getehdr(elf, &ehdr)) {
    out.executable = ehdr.e_type == ET_EXEC;
    std::size_t phnum = 0;
    dw.elf_getphdrnum(elf, &phnum);
    for (std::size_t i = 0; i < phnum; ++i) {
      GElf_Phdr ph;
      if (dw.gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD) {
        out.first_load_vaddr = ph.p_vaddr - ph.p_offset;
        break;
      }
    }
    Elf_Scn* scn = nullptr;
    while ((scn = dw.elf_nextscn(elf, scn))) {
      GElf_Shdr sh;
      if (!dw.gelf_getshdr(scn, &sh) ||
          (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNAMIC))
        continue;
      Elf_Data* data = dw.elf_getdata(scn, nullptr);
      if (!data || sh.sh_entsize == 0) continue;
      std::size_t count = sh.sh_size / sh.sh_entsize;
      if (sh.sh_type == SHT_DYNAMIC) {
        for (std::size_t i = 0; i < count; ++i) {
          GElf_Dyn dyn;
          if (!dw.gelf_getdyn(data, static_cast<int>(i), &dyn) || dyn.d_tag == DT_NULL) break;
          if (dyn.d_tag != DT_NEEDED) continue;
          if (const char* name = dw.elf_strptr(elf, sh.sh_link, dyn.d_un.d_val))
            out.needed.emplace_back(name);
        }
        continue;
      }
      for (std::size_t i = 0; i < count; ++i) {
        GElf_Sym sym;
        if (!dw.gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF) continue;
        const char* name = dw.elf_strptr(elf, sh.sh_link, sym.st_name);
        if (!name) continue;
        if (std::find(wanted.begin(), wanted.end(), name) != wanted.end())
          out.values.emplace(name, sym.st_value);
      }
    }
    out.ok = true;
  }
  dw.elf_end(elf);
  ::close(fd);
  return out;
}

}  // namespace mainboard::symbols

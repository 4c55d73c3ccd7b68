// Files in a JSON kind's folder that no run reads: a subfolder (the folders are flat: one file
// per item, the id in the name) or a name without `.json`. Without this, a `content/blog/post.json`
// or a `content/home.JSON` sits in the workspace while status says nothing about it, as if it
// were synced. The scan finds them in the listing it reads anyway (scan.ts); media keeps its
// tree, so media/ has no strays; ignored paths are chosen (or junk), not stray.

export interface StrayFile {
  path: string
  /** Why no run reads it. */
  reason: string
}

export function strayFilesOf(
  folder: string,
  others: readonly { name: string; dir: boolean }[],
  ignored: (path: string) => boolean,
): StrayFile[] {
  const strays: StrayFile[] = []
  for (const { name, dir } of others) {
    const path = `${folder}/${name}`
    if (dir) {
      if (ignored(`${path}/`)) continue
      strays.push({
        path: `${path}/`,
        reason: `a folder: ${folder}/ is flat (one file per item, ${folder}/<id>.json), so nothing in it is synced`,
      })
    } else if (!ignored(path)) {
      strays.push({
        path,
        reason: `not synced: only ${folder}/<id>.json files are items (this name does not end in .json)`,
      })
    }
  }
  return strays.sort((a, b) => (a.path < b.path ? -1 : 1))
}

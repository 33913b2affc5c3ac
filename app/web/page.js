// The browser's half of paralens' web page (WebMain.cpp is the other): starting the module with
// its threads (cross-origin isolation through coi-sw.js where the server sets no headers), files
// in (the file picker and drops, read off the main loop into the page's file system) and out
// (downloads), the clipboard, the address bar's link, the wheel and pinch, and a message with a
// Reload button when the module stops. window.paralens is the hook the browser tests use.
'use strict';

const kMaxFileBytes = 512 * 1024 * 1024; // all files of one open; memory is at most 2 GiB

const $ = (id) => document.getElementById(id);

const ParalensPage = {
  inputEvents: 0,   // counted for WebMain.cpp, which draws only when something moved
  downloads: [],    // {name, bytes} of each file handed to the browser
  errors: [],       // what the module printed on stderr, and page errors
  started: performance.now(),
  firstFrameMs: null,
  link: '',
  uploadSet: 0,

  failed(message) {
    $('loading').hidden = true;
    $('crash-title').textContent = 'paralens stopped';
    $('crash-detail').textContent = String(message);
    $('crash').hidden = false;
    this.errors.push(String(message));
  },

  firstFrame() {
    this.firstFrameMs = performance.now() - this.started;
    $('loading').hidden = true;
    if (this.resolveReady) this.resolveReady();
  },

  setLink(link) {
    this.link = link;
    if (location.hash !== '#' + link) history.replaceState(null, '', '#' + link);
  },

  copyText(text) {
    const full = location.href.replace(/#.*$/, '') + text;
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(full).catch(() => {});
    this.toast('Link copied: ' + full);
  },

  toast(text) {
    const t = $('toast');
    t.textContent = text;
    t.hidden = false;
    clearTimeout(this.toastTimer);
    this.toastTimer = setTimeout(() => { t.hidden = true; }, 4000);
  },

  pickFiles() { $('file-input').click(); },

  deliverFile(path, name) {
    const data = Module.FS.readFile(path);
    const url = URL.createObjectURL(new Blob([data]));
    const a = document.createElement('a');
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    Module.FS.unlink(path);
    this.downloads.push({name, bytes: data.length});
    this.toast('Saved ' + name + ' (' + Math.round(data.length / 1024) + ' KiB) to your downloads');
  },

  // Reads the files (without freezing the page) into /uploads/N/ and opens them there.
  async openFiles(fileList) {
    const files = Array.from(fileList);
    if (files.length === 0) return;
    const total = files.reduce((sum, f) => sum + f.size, 0);
    if (total > kMaxFileBytes) {
      const mb = (n) => Math.round(n / 1048576) + ' MB';
      this.toast(`${files.length === 1 ? files[0].name : files.length + ' files'}: ${mb(total)} is more than the page opens (${mb(kMaxFileBytes)}); the desktop app opens any size`);
      this.errors.push('too large: ' + total);
      return;
    }
    const dir = '/uploads/' + (++this.uploadSet);
    Module.FS.mkdirTree(dir);
    const paths = [];
    $('reading').hidden = false;
    let done = 0;
    try {
      for (const file of files) {
        const bytes = await this.readFile(file, (loaded) => {
          $('reading-text').textContent = 'Reading ' + file.name + '...';
          $('reading-bar').value = total ? (done + loaded) / total : 0;
        });
        const path = dir + '/' + file.name.replace(/\//g, '_');
        Module.FS.writeFile(path, bytes);
        paths.push(path);
        done += file.size;
      }
    } catch (e) {
      $('reading').hidden = true;
      if (e !== 'cancelled') this.toast('Cannot read the file: ' + e);
      return;
    }
    $('reading').hidden = true;
    this.dropUploadsBefore(this.uploadSet); // the previous files are no longer shown
    Module.ccall('paralens_open_files', null, ['string'], [JSON.stringify(paths)]);
  },

  readFile(file, onProgress) {
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      this.cancelRead = () => { reader.abort(); reject('cancelled'); };
      reader.onprogress = (e) => onProgress(e.loaded);
      reader.onload = () => resolve(new Uint8Array(reader.result));
      reader.onerror = () => reject(reader.error ? reader.error.message : 'read error');
      reader.readAsArrayBuffer(file);
    });
  },

  dropUploadsBefore(set) {
    for (let i = 1; i < set; ++i) {
      const dir = '/uploads/' + i;
      try {
        for (const name of Module.FS.readdir(dir)) if (name !== '.' && name !== '..') Module.FS.unlink(dir + '/' + name);
        Module.FS.rmdir(dir);
      } catch (e) { /* already gone */ }
    }
  },
};
window.ParalensPage = ParalensPage;

// ---- input: counted (for the idle main loop), the wheel and pinch normalised, files dropped ----
for (const type of ['pointerdown', 'pointerup', 'pointermove', 'keydown', 'keyup', 'wheel', 'focus', 'blur'])
  window.addEventListener(type, () => { ParalensPage.inputEvents++; }, true);

// Ctrl+O and Ctrl+S are the window's (open a trace, and nothing), not the browser's open and save.
window.addEventListener('keydown', (e) => {
  if ((e.ctrlKey || e.metaKey) && (e.key === 'o' || e.key === 's')) e.preventDefault();
}, true);

// emscripten's GLFW passes the browser's deltaY (100 per notch, and the other way round): one
// notch is one step here, down zooms out; a touchpad pinch (a wheel event with ctrlKey) zooms the
// timeline instead of the page.
window.addEventListener('wheel', (e) => {
  if (e.target !== $('canvas') || !window.Module || !Module.calledRun) return;
  const unit = e.deltaMode === 1 ? 3 : e.deltaMode === 2 ? 1 : 100;
  const gain = e.ctrlKey ? 4 : 1;
  Module.ccall('paralens_wheel', null, ['number', 'number'], [-e.deltaX / unit * gain, -e.deltaY / unit * gain]);
  e.preventDefault();
  e.stopPropagation();
}, {capture: true, passive: false});

let dragDepth = 0;
window.addEventListener('dragenter', (e) => { e.preventDefault(); if (++dragDepth === 1) $('dropzone').hidden = false; }, true);
window.addEventListener('dragleave', (e) => { e.preventDefault(); if (--dragDepth <= 0) { dragDepth = 0; $('dropzone').hidden = true; } }, true);
window.addEventListener('dragover', (e) => { e.preventDefault(); e.stopPropagation(); }, true);
window.addEventListener('drop', (e) => {
  e.preventDefault();
  e.stopPropagation(); // not emscripten's GLFW: the page reads the files itself
  dragDepth = 0;
  $('dropzone').hidden = true;
  if (e.dataTransfer && e.dataTransfer.files.length) ParalensPage.openFiles(e.dataTransfer.files);
}, true);
$('file-input').addEventListener('change', (e) => {
  const files = Array.from(e.target.files);
  e.target.value = '';
  ParalensPage.openFiles(files);
});
$('reading-cancel').addEventListener('click', () => { if (ParalensPage.cancelRead) ParalensPage.cancelRead(); });
window.addEventListener('hashchange', () => {
  const link = location.hash.replace(/^#/, '');
  if (link !== ParalensPage.link && Module.calledRun) Module.ccall('paralens_open_link', null, ['string'], [link]);
});
window.addEventListener('error', (e) => ParalensPage.failed(e.message || e.error || 'error'));
window.addEventListener('unhandledrejection', (e) => ParalensPage.failed(e.reason || 'error'));

// ---- the module ----
window.Module = {
  canvas: $('canvas'),
  print: (text) => console.log(text),
  printErr: (text) => { console.warn(text); ParalensPage.errors.push(text); },
  onAbort: (what) => ParalensPage.failed('The module aborted: ' + what),
  setStatus: (text) => { if (text) $('loading-text').textContent = text; },
  monitorRunDependencies: (left) => { $('loading-bar').removeAttribute('value'); },
};

// The test hook: the page's state as WebMain.cpp reports it, and a promise of the first frame.
window.paralens = {
  ready: new Promise((resolve) => { ParalensPage.resolveReady = resolve; }),
  state: () => JSON.parse(Module.ccall('paralens_state', 'string', [], [])),
  openLink: (link) => { location.hash = '#' + link; },
  page: ParalensPage,
};

function start() {
  const script = document.createElement('script');
  script.src = 'paralens.js';
  script.onerror = () => ParalensPage.failed('paralens.js could not be loaded from ' + location.href.replace(/[#?].*$/, ''));
  document.body.appendChild(script);
}

// Threads need cross-origin isolation. A server that sends COOP/COEP gives it at once; otherwise
// coi-sw.js adds those headers, which takes one reload the first time.
if (window.crossOriginIsolated) {
  start();
} else if (!window.isSecureContext || !('serviceWorker' in navigator)) {
  ParalensPage.failed('This page needs https (or http://localhost) and service workers, to run its threads in ' +
                      'the browser. Open it from an https address, or serve it locally.');
} else if (sessionStorage.getItem('paralens-coi-reload')) {
  sessionStorage.removeItem('paralens-coi-reload');
  ParalensPage.failed('The browser did not let the page isolate itself (a private window may refuse service ' +
                      'workers). Serve build/web with the headers Cross-Origin-Opener-Policy: same-origin and ' +
                      'Cross-Origin-Embedder-Policy: require-corp, or open it in a normal window.');
} else {
  $('loading-text').textContent = 'Preparing the page (once)...';
  navigator.serviceWorker.register('coi-sw.js').then((registration) => {
    const reload = () => { sessionStorage.setItem('paralens-coi-reload', '1'); location.reload(); };
    if (registration.active && navigator.serviceWorker.controller) reload();
    else navigator.serviceWorker.addEventListener('controllerchange', reload);
  }, (e) => ParalensPage.failed('The page could not install its service worker: ' + e));
}
if (window.crossOriginIsolated) sessionStorage.removeItem('paralens-coi-reload');

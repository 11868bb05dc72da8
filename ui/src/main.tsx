import { render } from 'preact';

function App() {
  return <h1>Berth admin</h1>;
}

render(<App />, document.getElementById('app')!);
